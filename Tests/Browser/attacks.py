#!/usr/bin/python3
"""What a foreign page can do to `msglog serve` on localhost, in a real
browser (headless Chromium driven by Selenium), against a running server
without a token.

    Tests/Browser/attacks.py URL

- a page on another local origin (another port) sends writes the browser
  needs no preflight for: `fetch(..., {mode: 'no-cors'})` with a JSON text
  body, and an auto-submitted `<form enctype=text/plain>`;
- a `file://` page (Origin: null) does the same;
- a page on a name that resolves to 127.0.0.1 (DNS rebinding, Chromium's
  `--host-resolver-rules`) loads the page and reads the API;
- a foreign page frames the page.
None of it may write, read or frame. Reports every failure (each attack is
tried whatever the others did) and exits non-zero; prints "ok" otherwise.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from urllib.parse import urlparse

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

url = sys.argv[1]
port = urlparse(url).port


failures = []


def check(condition, message):
    if not condition:
        print("FAILED: " + message)
        failures.append(message)


def items():
    request = urllib.request.Request(url + "api/items?stream=main")
    with urllib.request.urlopen(request) as response:
        return [item["text"] for item in json.loads(response.read())["items"]]


# Each browser's profile, in one directory removed at the end.
profiles = tempfile.mkdtemp(prefix="msglog-attacks-chromium-")


def browser(*extra):
    options = webdriver.ChromeOptions()
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=820,640",
                     "--user-data-dir=" + tempfile.mkdtemp(dir=profiles, prefix="profile-")] + list(extra):
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


# Each attack says when the server has answered it: the fetches when both
# have settled (a no-cors fetch settles once the answer arrives), the form
# when its answer has loaded into the sink frame. Only then is "nothing was
# written" a finding rather than a guess about timing.
ATTACK = """<!doctype html><title>attack</title>
<iframe name="sink" id="sink"></iframe>
<form id="form" method="POST" action="%(target)sapi/append" enctype="text/plain" target="sink">
<input name='{"text":"pwned by a form %(via)s","sender":"' value='"}'></form>
<script>
Promise.allSettled([
  fetch("%(target)sapi/append", {method: "POST", mode: "no-cors", body: '{"text":"pwned by fetch %(via)s"}'}),
  fetch("%(target)sapi/insert", {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"},
    body: '{"index":0,"text":"pwned by insert %(via)s"}'}),
]).then(() => { document.body.dataset.fetched = "true"; });
document.getElementById("sink").addEventListener("load", () => { document.body.dataset.sunk = "true"; });
document.getElementById("form").submit();
</script>"""

FRAME = """<!doctype html><title>frame</title>
<iframe id="victim" src="%s" width="600" height="400"></iframe>
<script>document.getElementById("victim").addEventListener("load", () => { document.body.dataset.framed = "true"; });</script>"""


def wait_for(driver, script, what, seconds=20):
    """Polls `script` (JavaScript returning true once it holds) until it holds."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if driver.execute_script(script):
            return True
        time.sleep(0.05)
    check(False, "the browser never said " + what)
    return False

before = items()
pages = tempfile.mkdtemp(prefix="msglog-attacks-")
with open(os.path.join(pages, "attack.html"), "w") as f:
    f.write(ATTACK % {"target": url, "via": "another origin"})
with open(os.path.join(pages, "file.html"), "w") as f:
    f.write(ATTACK % {"target": url, "via": "a file page"})
with open(os.path.join(pages, "frame.html"), "w") as f:
    f.write(FRAME % url)
# The second origin: the same host, another port.
other = subprocess.Popen([sys.executable, "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", pages],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
try:
    line = other.stdout.readline()
    other_port = int(line.split("port ")[1].split(" ")[0])
    origin = "http://127.0.0.1:%d/" % other_port

    driver = browser()
    try:
        # Writes from another origin and from a file:// page.
        for page in [origin + "attack.html", "file://" + os.path.join(pages, "file.html")]:
            driver.get(page)
            wait_for(driver, "return document.body.dataset.fetched === 'true' && document.body.dataset.sunk === 'true'",
                     "the attack's requests were answered (%s)" % page)
            now = items()
            check(now == before, "a write from %s went through: %s" % (page, now))
            before = now

        # Framing: the page refuses to load inside a foreign page.
        driver.get(origin + "frame.html")
        wait_for(driver, "return document.body.dataset.framed === 'true'", "the frame finished loading")
        driver.switch_to.frame("victim")
        # A frame the browser refused holds its error page, never the page's document.
        framed = driver.execute_script(
            "return [location.href, !!document.querySelector('script[src*=\"app.js\"]')]")
        driver.switch_to.default_content()
        check(not framed[1] and not framed[0].startswith(url),
              "the page loaded inside a foreign page's frame: %s" % framed[0])
    finally:
        driver.quit()

    # DNS rebinding: evil.example resolves to 127.0.0.1.
    rebound = browser("--host-resolver-rules=MAP evil.example 127.0.0.1")
    try:
        # The document at the rebound name is the server's own 403, whose
        # CSP (default-src 'none') would stop the script's fetches before
        # they leave; an attacker's page would carry no such policy, so the
        # browser is told to ignore it and the server's answers are tested.
        rebound.execute_cdp_cmd("Page.setBypassCSP", {"enabled": True})
        rebound.get("http://evil.example:%d/" % port)  # returns once the document has loaded
        served = rebound.execute_script("return !!document.querySelector('script[src*=\"app.js\"]')")
        check(not served, "the page loaded as http://evil.example:%d/" % port)
        answer = rebound.execute_async_script("""
            const done = arguments[arguments.length - 1];
            fetch("/api/items?stream=main").then(async (r) => done([r.status, await r.text()]))
              .catch((e) => done([0, String(e)]));""")
        check(answer[0] == 403, "the rebound name read the API: %s" % answer)
        check(not any(text in answer[1] for text in before), "the rebound name saw a message: %s" % answer)
        write = rebound.execute_async_script("""
            const done = arguments[arguments.length - 1];
            fetch("/api/append", {method: "POST", headers: {"Content-Type": "application/json"},
              body: '{"text":"pwned by rebinding"}'}).then((r) => done(r.status)).catch((e) => done(0));""")
        check(write == 403, "the rebound name could write: %s" % write)
    finally:
        rebound.quit()
    check(items() == before, "something was written: %s" % items())
finally:
    other.terminate()
    other.wait()
    shutil.rmtree(pages, ignore_errors=True)
    shutil.rmtree(profiles, ignore_errors=True)
if failures:
    sys.exit(1)
print("ok")
