// Following (Sources/MsglogServer/Page/Resources/follow.js): the server's
// event stream cut into its events' data, however the bytes arrive.

import assert from "node:assert/strict";
import { test } from "node:test";
import { eventData } from "../../Sources/MsglogServer/Page/Resources/follow.js";

test("each whole event's data, in order; what is still arriving is kept for the next read", () => {
  const { data, rest } = eventData('retry: 1000\n\nid: 7\ndata: {"seq":7}\n\n: keep-alive\n\nid: 8\ndata: {"se');
  assert.deepEqual(data, ['{"seq":7}']);
  assert.equal(rest, 'id: 8\ndata: {"se');
  const after = eventData(rest + 'q":8}\n\n');
  assert.deepEqual(after, { data: ['{"seq":8}'], rest: "" });
});

test("an event cut anywhere, even between its two newlines, comes out once", () => {
  const stream = 'id: 1\ndata: {"seq":1}\n\nid: 2\ndata: {"seq":2}\n\n';
  for (let cut = 0; cut <= stream.length; cut++) {
    const first = eventData(stream.slice(0, cut));
    const second = eventData(first.rest + stream.slice(cut));
    assert.deepEqual(first.data.concat(second.data), ['{"seq":1}', '{"seq":2}'], "cut at " + cut);
    assert.equal(second.rest, "");
  }
});
