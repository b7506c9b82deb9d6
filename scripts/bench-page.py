#!/usr/bin/python3
"""How long the page takes to open a stream of 10,000 items, against the
floor for the browser: Chromium showing a static page of the same items.

    scripts/bench-page.py --msglog BINARY [--items 10000] [--rounds 9] [--trace DIRECTORY]

(`scripts/bench --page` builds the release binary and runs this.)

A log of ITEMS messages in one stream (as Tests/Browser/page.py's
ten-thousand-items case) is served by `msglog serve`. Two static pages of
the same items, served by a plain HTTP server: the floor the target is
measured against, the items as plain HTML (an `<ol>` of `<li>`, no
stylesheet: the least a browser can be given), and for the report,
index.html with the page's script left out and the items written into its
list as the page draws them (the chat's bubbles, the board's cards), with
the page's stylesheet. All are opened
in one headless Chromium at a desktop size, with their files cached (each
opened twice first; the page's service worker installed), alternately,
ROUNDS times each; each time is from the navigation's start to the first
frame after the list is complete — the static page's `DOMContentLoaded`,
the page's `document.body.dataset.ready` — found by the same probe in both
(a script Chromium runs in every document before its own). The medians and
their ratio are printed as a table in docs/PERFORMANCE.md's form, with what
the page's time is made of (its files, each request, drawing).

`--trace DIRECTORY` also records one opening of each view and of its static
pages with Chromium's tracing through chromedriver (the DevTools timeline)
into DIRECTORY/NAME.json, for chrome://tracing or Perfetto, and prints what
the renderer's main thread did from the navigation's start to the mark.
`--compare BINARY` opens another msglog's page (its msglog-serve beside it)
in the same run, alternately with the rest: before and after a change.
"""
import argparse
import datetime
import html
import http.server
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "Tests", "Browser"))
from harness import Msglog, browser, check, cleanup, items, run_cleanup, wait_until  # noqa: E402
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402

RESOURCES = os.path.join(root, "Sources", "MsglogServer", "Page", "Resources")

# In every document, before its own scripts: marks `bench-shown` in the
# first frame after the list is complete (a task queued from the frame's
# requestAnimationFrame runs once that frame is drawn).
PROBE = """
(() => {
  const shown = () => requestAnimationFrame(() => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => performance.mark("bench-shown");
    channel.port2.postMessage(null);
  });
  document.addEventListener("DOMContentLoaded", () => {
    if (!document.querySelector('script[src="/app.js"]')) { shown(); return; }
    const ready = () => document.body.dataset.ready === "true";
    if (ready()) { shown(); return; }
    const watch = new MutationObserver(() => { if (ready()) { watch.disconnect(); shown(); } });
    watch.observe(document.body, { attributes: true, attributeFilter: ["data-ready"] });
  });
})();
"""


def when(iso):
    """A time as the page writes it for another day (words.js `when`): "14 Mar 2026, 09:26"."""
    t = datetime.datetime.strptime(iso[:19], "%Y-%m-%dT%H:%M:%S")
    return "%d %s %d, %s" % (t.day, t.strftime("%b"), t.year, t.strftime("%H:%M"))


def message(item):
    """A chat message as chat.js draws it."""
    return ('<li class="message" data-id="%s"><div class="bubble"><div class="meta">'
            '<bdi class="sender">%s</bdi><time class="time" datetime="%s">%s</time>'
            '<span class="edited" hidden>edited</span><span class="pending-mark" hidden>pending</span>'
            '<button class="edit" type="button" hidden>Edit</button></div>'
            '<p class="text" dir="auto">%s</p></div></li>') % (
        item["id"], html.escape(item.get("sender", "")), item["time"], when(item["time"]), html.escape(item["text"]))


def card(item):
    """A board card as board.js draws it."""
    return ('<li class="card" data-id="%s" tabindex="-1"><div class="face"><span class="handle" aria-hidden="true"></span>'
            '<span class="swatch" aria-hidden="true" hidden></span><span class="text" dir="auto">%s</span>'
            '<bdi class="sender">%s</bdi><span class="pending-mark" hidden>pending</span>'
            '<button class="delete" type="button" tabindex="-1" aria-label="Delete">×</button></div></li>') % (
        item["id"], html.escape(item["text"]), html.escape(item.get("sender", "")))


def plain_page(view, listed):
    """The same items as plain HTML, without the page's markup or stylesheet: the least a browser can be given."""
    if view == "chat":
        rows = ('<li><b>%s</b> <time datetime="%s">%s</time><p>%s</p></li>' % (
            html.escape(i.get("sender", "")), i["time"], when(i["time"]), html.escape(i["text"])) for i in listed)
    else:
        rows = ("<li>%s <b>%s</b></li>" % (html.escape(i["text"]), html.escape(i.get("sender", ""))) for i in listed)
    return ('<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>msglog</title>\n</head>\n'
            '<body>\n<ol>%s</ol>\n</body>\n</html>\n') % "".join(rows)


def static_page(view, listed):
    """index.html without its script, its `view` list holding every item: the floor."""
    with open(os.path.join(RESOURCES, "index.html")) as f:
        page = f.read()
    page = page.replace('<script src="/app.js" type="module"></script>\n', "")
    check('<script' not in page, "index.html has another script")
    make = message if view == "chat" else card
    body = "".join(make(item) for item in listed)
    opening = '<ol id="%s" class="%s" aria-label="%s"' % (view, view, "Messages" if view == "chat" else "Cards")
    start = page.index(opening)
    close = page.index("</ol>", start)
    page = page[:close] + body + page[close:]
    if view == "board":
        page = page.replace('<ol id="board" class="board" aria-label="Cards" hidden>', '<ol id="board" class="board" aria-label="Cards">')
        page = page.replace('<ol id="chat" class="chat" aria-label="Messages">', '<ol id="chat" class="chat" aria-label="Messages" hidden>')
    return page


class StaticServer:
    """A plain HTTP server of `directory` (with Last-Modified, so that a browser revalidates)."""

    def __init__(self, directory):
        handler = lambda *a, **k: Quiet(*a, directory=directory, **k)  # noqa: E731
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = "http://127.0.0.1:%d/" % self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        cleanup(self.httpd.shutdown)


class Quiet(http.server.SimpleHTTPRequestHandler):
    def end_headers(self):
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def log_message(self, *args):
        pass


def shown_after(driver, url):
    """Milliseconds from the navigation's start to the probe's mark, and the page's own marks and requests."""
    driver.get(url)
    mark = wait_until("the probe marks the page shown", lambda: driver.execute_script(
        "return performance.getEntriesByName('bench-shown')[0]?.startTime"), 60)
    parts = driver.execute_script("""
        const nav = performance.getEntriesByType('navigation')[0];
        const parts = { dcl: nav.domContentLoadedEventEnd, ready: performance.getEntriesByName('msglog-ready')[0]?.startTime };
        for (const e of performance.getEntriesByType('resource')) {
          const path = new URL(e.name).pathname;
          if (path.startsWith('/api/')) parts[path] = [e.startTime, e.responseEnd];
        }
        return parts;""")
    return mark, parts


# The main thread's work in a trace, by the DevTools timeline's names (each counted alone: RunTask holds the others).
WORK = ["RunTask", "ParseHTML", "v8.compileModule", "EvaluateScript", "v8.evaluateModule", "FunctionCall", "EventDispatch",
        "TimerFire", "FireAnimationFrame", "UpdateLayoutTree", "Layout", "PrePaint", "Paint", "Layerize", "Commit",
        "MajorGC", "MinorGC", "V8.GC_SCAVENGER", "V8.GC_MARK_COMPACTOR"]


def traced(directory, url, name, out):
    """One opening of `url` recorded with Chromium's tracing into out/NAME.json; what the renderer's main thread did."""
    profile = tempfile.mkdtemp(dir=directory, prefix="chromium-trace-")
    options = webdriver.ChromeOptions()
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,800",
                     "--user-data-dir=" + profile, "--lang=en-US", "--no-first-run", "--no-default-browser-check"]:
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    options.add_experimental_option("perfLoggingPrefs", {
        "enableNetwork": False, "enablePage": False,
        "traceCategories": "devtools.timeline,blink.user_timing,v8,disabled-by-default-devtools.timeline"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    cleanup(lambda: shutil.rmtree(profile, ignore_errors=True))
    cleanup(driver.quit)
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": PROBE})
    for _ in range(2):  # the files cached, the service worker installed
        shown_after(driver, url)
    shown = shown_after(driver, url)[0]
    events = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Tracing.dataCollected":
            events.append(message["params"])
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump({"traceEvents": events}, f)
    # From the last navigation's start to the probe's mark, on the renderer's main thread.
    main = {(e["pid"], e["tid"]) for e in events if e.get("name") == "thread_name" and e.get("args", {}).get("name") == "CrRendererMain"}
    starts = [e["ts"] for e in events if e.get("name") == "navigationStart" and (e["pid"], e["tid"]) in main]
    ends = [e["ts"] for e in events if e.get("name") == "bench-shown"]
    if not starts or not ends:
        print("%s: the trace has no navigation or no mark" % name, file=sys.stderr)
        return
    begin, end = max(starts), max(ends)
    totals = {}
    for e in events:
        if (e.get("pid"), e.get("tid")) in main and e.get("ph") == "X" and begin <= e["ts"] <= end and e["name"] in WORK:
            totals[e["name"]] = totals.get(e["name"], 0) + e.get("dur", 0) / 1000
    print("%s, traced into %s: shown at %.0f ms (%.0f ms traced); the main thread: %s" % (
        name, os.path.join(out, name + ".json"), shown, (end - begin) / 1000,
        ", ".join("%s %.0f ms" % (k, totals[k]) for k in WORK if totals.get(k, 0) >= 1)), file=sys.stderr)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--msglog", required=True)
    parser.add_argument("--items", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--trace")
    parser.add_argument("--verbose", action="store_true", help="what each opening of the page was made of")
    parser.add_argument("--compare", help="another msglog binary (its msglog-serve beside it): its page opened in the same run")
    args = parser.parse_args()
    directory = tempfile.mkdtemp(prefix="msglog-bench-page-")
    try:
        run(args, directory)
    finally:
        run_cleanup()
        shutil.rmtree(directory, ignore_errors=True)


def run(args, directory):
    n = args.items
    m = Msglog(args.msglog, directory)
    m.import_lines({"op": "append", "stream": "big", "text": "message number %d, with a few words to wrap" % i, "sender": "ann"}
                   for i in range(n))
    server = m.serve()
    other = Msglog(args.compare, directory).serve() if args.compare else None
    listed = items(server, "big")
    check(len(listed) == n, "the log holds %d items" % len(listed))
    static = os.path.join(directory, "static")
    os.mkdir(static)
    for name in ["app.css", "favicon.svg"]:
        shutil.copy(os.path.join(RESOURCES, name), static)
    for view in ["chat", "board"]:
        with open(os.path.join(static, view + ".html"), "w") as f:
            f.write(static_page(view, listed))
        with open(os.path.join(static, "plain-" + view + ".html"), "w") as f:
            f.write(plain_page(view, listed))
    floor = StaticServer(static)
    driver = browser(directory)
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": PROBE})
    rows = []
    for view in ["chat", "board"]:
        urls = {"page": server.url + "?stream=big&view=" + view, "plain": floor.url + "plain-" + view + ".html",
                "static": floor.url + view + ".html"}
        if other:
            urls["compared"] = other.url + "?stream=big&view=" + view
        for url in list(urls.values()) * 2:  # the files cached, the service worker installed
            shown_after(driver, url)
        times = {name: [] for name in urls}
        parts = []
        names = list(urls)
        for round in range(args.rounds):
            # Each round in another order: what is opened right after what (a big static page, another origin) varies alike.
            for name in names[round % len(names):] + names[:round % len(names)]:
                url = urls[name]
                t, p = shown_after(driver, url)
                times[name].append(t)
                if name == "page":
                    parts.append(p)
                    drawn = driver.execute_script("return document.querySelectorAll('[data-id]').length")
                if name in ("page", "compared") and args.verbose:
                    print("%s %s: %.0f ms; files and modules run by %.0f ms; %s; ready at %.0f ms" % (
                        name, view, t, p["dcl"], ", ".join("%s %.0f–%.0f" % (k, *v) for k, v in sorted(p.items(), key=lambda kv: str(kv[1]))
                                                           if k.startswith("/api/")), p.get("ready") or 0), file=sys.stderr)
        medians = {name: statistics.median(ts) for name, ts in times.items()}
        for name, ts in times.items():
            print("%s %s: %s ms" % (name, view, ", ".join("%.0f" % t for t in ts)), file=sys.stderr)
        middle = parts[times["page"].index(sorted(times["page"])[len(times["page"]) // 2])]
        requests = ", ".join("%s %.0f–%.0f" % (path, *span) for path, span in sorted(middle.items(), key=lambda kv: str(kv[1]))
                             if path.startswith("/api/"))
        print("page %s, the median run: files and modules run by %.0f ms; %s; ready at %.0f ms; shown at %.0f ms; %d items drawn"
              % (view, middle["dcl"], requests, middle.get("ready") or 0, medians["page"], drawn), file=sys.stderr)
        what = "the %s with %s items opens" % (view, format(n, ","))
        rows.append([what + ", vs the same items as a plain HTML page (median of %d)" % args.rounds,
                     "%.0f ms" % medians["page"], "%.0f ms" % medians["plain"], "%.2f×" % (medians["page"] / medians["plain"]), "≤ 2×"])
        rows.append([what + ", vs a static page of them as the page draws them", "%.0f ms" % medians["page"],
                     "%.0f ms" % medians["static"], "%.2f×" % (medians["page"] / medians["static"]), "report"])
        if other:
            rows.append([what + ", vs the page of " + args.compare, "%.0f ms" % medians["page"],
                         "%.0f ms" % medians["compared"], "%.2f×" % (medians["page"] / medians["compared"]), "report"])
    if args.trace:
        os.makedirs(args.trace, exist_ok=True)
        for view in ["chat", "board"]:
            traced(directory, server.url + "?stream=big&view=" + view, view, args.trace)
            traced(directory, floor.url + view + ".html", "static-" + view, args.trace)
            traced(directory, floor.url + "plain-" + view + ".html", "plain-" + view, args.trace)
            if other:
                traced(directory, other.url + "?stream=big&view=" + view, "compared-" + view, args.trace)
    header = ["figure", "msglog", "baseline", "ratio", "target"]
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(5)]
    for i, row in enumerate([header, ["-" * w for w in widths]] + rows):
        print("| " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths)) + " |")


if __name__ == "__main__":
    main()
