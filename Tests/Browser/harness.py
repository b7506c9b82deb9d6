"""What the browser tests share: the msglog binary on a database of its own,
`msglog serve` processes they start and stop, headless Chromium windows
(desktop, or a phone with touch; light or dark), the HTTP API, and waiting
for a condition (never for a fixed time).

Everything a test starts is registered with `cleanup` and ended by
`run_cleanup`, whatever happened; files go under the directory the test was
given (its sandbox), which the caller removes.
"""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


_cleanups = []
_drivers = []


def cleanup(action):
    _cleanups.append(action)


def run_cleanup():
    while _cleanups:
        action = _cleanups.pop()
        try:
            action()
        except Exception as error:  # keep cleaning up
            print("cleanup: %s" % error)


def wait_until(what, probe, seconds=15, interval=0.03):
    """Returns probe()'s first truthy value; fails after `seconds` with the last value seen."""
    deadline = time.monotonic() + seconds
    value = None
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise Failure("%s (gave up after %d s; last: %r)" % (what, seconds, value))
        time.sleep(interval)


class Msglog:
    """The msglog binary on one LMDB database under `directory`."""

    def __init__(self, binary, directory, name="db"):
        self.binary = os.path.abspath(binary)
        self.directory = directory
        self.db = os.path.join(directory, name + ".lmdb")

    def environment(self, extra=None):
        env = {"PATH": "/usr/bin:/bin", "MSGLOG_DB": self.db}
        env.update(extra or {})
        return env

    def run(self, *args, stdin=None):
        result = subprocess.run([self.binary, *args], input=stdin, capture_output=True, env=self.environment(),
                                cwd=self.directory, timeout=300)
        check(result.returncode == 0, "msglog %s: exit %d: %s" % (" ".join(args), result.returncode,
                                                                    result.stderr.decode(errors="replace")))
        return result.stdout.decode()

    def import_lines(self, objects):
        self.run("import", "-", stdin="".join(json.dumps(o) + "\n" for o in objects).encode())

    def serve(self, listen="127.0.0.1:0", token=None):
        return Server(self, listen, token)


class Server:
    """`msglog serve`, started and stopped by the test (SIGTERM, as a user's Ctrl-C)."""

    def __init__(self, msglog, listen, token):
        self.msglog = msglog
        self.token = token
        fd, self.out_path = tempfile.mkstemp(dir=msglog.directory, prefix="serve-", suffix=".out")
        with os.fdopen(fd, "wb") as out:
            env = msglog.environment({"MSGLOG_TOKEN": token} if token else None)
            self.process = subprocess.Popen([msglog.binary, "serve", "--listen", listen], stdout=out,
                                            stderr=subprocess.STDOUT, env=env, cwd=msglog.directory)
        cleanup(self.stop)

        def printed_url():
            with open(self.out_path) as f:
                for word in f.read().split():
                    if word.startswith("http://"):
                        return word
            check(self.process.poll() is None, "msglog serve exited: %s" % open(self.out_path).read())
            return None
        self.url = wait_until("msglog serve prints its address", printed_url, 30)
        self.port = urllib.parse.urlsplit(self.url).port

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def api(self, path, body=None, token=None):
        return api(self.url, path, body, token if token is not None else self.token)


class HTTPError(Exception):
    def __init__(self, status, body):
        super().__init__("HTTP %d: %s" % (status, body))
        self.status = status
        self.body = body


def api(url, path, body=None, token=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url.rstrip("/") + path, data=data, method="POST" if data else "GET")
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read().decode()
    except urllib.error.HTTPError as error:
        raise HTTPError(error.code, error.read().decode()) from None
    if path.startswith("/api/events"):
        return [json.loads(line) for line in text.splitlines() if line]
    return json.loads(text)


def items(server, stream):
    try:
        return server.api("/api/items?stream=" + urllib.parse.quote(stream))["items"]
    except HTTPError as error:
        if error.status == 404:
            return []
        raise


def events(server, stream):
    return server.api("/api/events?from=1&limit=100000&stream=" + urllib.parse.quote(stream))


PHONE = (390, 844)
DESKTOP = (1280, 800)


def browser(directory, size=DESKTOP, touch=False, dark=False, network_log=False, arguments=()):
    """Headless Chromium at `size` CSS pixels; `touch`: a phone (touch events, mobile viewport); `arguments`: more
    of Chromium's command-line flags."""
    profile = tempfile.mkdtemp(dir=directory, prefix="chromium-")
    options = webdriver.ChromeOptions()
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=%d,%d" % size, "--user-data-dir=" + profile, "--lang=en-US",
                     "--no-first-run", "--no-default-browser-check", *arguments]:
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    prefs = {"browser": "ALL"}
    if network_log:
        prefs["performance"] = "ALL"
        options.set_capability("goog:perfLoggingPrefs", {"enableNetwork": True, "enablePage": False})
    options.set_capability("goog:loggingPrefs", prefs)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    _drivers.append(driver)
    cleanup(lambda: _drivers.remove(driver))
    cleanup(lambda: shutil.rmtree(profile, ignore_errors=True))
    cleanup(driver.quit)
    driver.set_script_timeout(60)
    cdp = driver.execute_cdp_cmd
    cdp("Emulation.setDeviceMetricsOverride", {"width": size[0], "height": size[1], "deviceScaleFactor": 2 if touch else 1,
                                               "mobile": touch})
    if touch:
        cdp("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 5})
        cdp("Emulation.setEmitTouchEventsForMouse", {"enabled": True, "configuration": "mobile"})
    driver.msglog_touch = touch  # a phone's buttons are tapped (WebDriver's click waits on them for ever)
    if dark:
        set_scheme(driver, "dark")
    return driver


def set_scheme(driver, scheme):
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                           {"features": [{"name": "prefers-color-scheme", "value": scheme}]})


def page_url(server, stream, view, fragment=""):
    return server.url + "?" + urllib.parse.urlencode({"stream": stream, "view": view}) + fragment


def wait_ready(driver, seconds=30):
    wait_until("the page is ready (document.body.dataset.ready)",
               lambda: driver.execute_script("return document.body.dataset.ready === 'true'"), seconds)


def open_page(driver, server, stream, view, fragment=""):
    """Opens the page; a token in `fragment` is signed in with, as its user does (the page offers it first)."""
    driver.get(page_url(server, stream, view, fragment))
    if "token=" in fragment:
        accept_token_offer(driver)
    wait_ready(driver)


def accept_token_offer(driver):
    """Signs in with the token a link offered, once the page offers it."""
    form = driver.find_element(By.ID, "offer-form")
    wait_until("the page offers the link's token", lambda: form.is_displayed())
    time.sleep(0.6)  # the page takes no click on Sign in for half a second after it shows it (token.js)
    button = driver.find_element(By.ID, "offer-accept")
    if getattr(driver, "msglog_touch", False):
        tap(driver, button)
    else:
        button.click()
    wait_until("the page signs in with it", lambda: not form.is_displayed()
               and driver.execute_script("return sessionStorage.getItem('msglog.token')") is not None)


# In one script each: the page may draw again between two element lookups.
SHOWN_IDS = """
  return [...document.querySelectorAll('[data-id]')]
    .filter((e) => e.getClientRects().length > 0)
    .map((e) => e.dataset.id)"""


def shown_ids(driver):
    return driver.execute_script(SHOWN_IDS)


def shown_texts(driver, view):
    return driver.execute_script(
        "return [...document.querySelectorAll('#%s [data-id] .text')].map((e) => e.textContent)" % view)


def wait_texts(driver, view, expected, what, seconds=15):
    last = [None]

    def probe():
        last[0] = shown_texts(driver, view)
        return last[0] == expected
    try:
        wait_until("", probe, seconds)
    except Failure:
        raise Failure("%s: the page should show %r, it shows %r" % (what, expected, last[0])) from None


def pages_as_they_are():
    """What each window still open shows, for a failure's report (a flaky case in CI leaves only its output):
    the address, the status, the note, the message box and the console."""
    report = []
    for number, driver in enumerate(_drivers, 1):
        try:
            shown = driver.execute_script("""
                const text = (id) => { const e = document.getElementById(id); return e ? (e.hidden ? '(hidden) ' : '') + (e.value ?? e.textContent).trim() : '(none)'; };
                return { url: location.href, status: text('status'), note: text('note-text'), held: text('held'),
                         box: text('compose-text'), worker: !!(navigator.serviceWorker && navigator.serviceWorker.controller) };""")
            report.append("window %d: %r" % (number, shown))
            for entry in driver.get_log("browser"):
                report.append("window %d console: %s %s" % (number, entry["level"], entry["message"]))
        except Exception as error:  # a window already gone says so and the report goes on
            report.append("window %d: not readable (%s)" % (number, str(error).splitlines()[0] if str(error) else error))
    return "\n".join(report)


def console_errors(driver):
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def network_events(driver):
    """Chromium's Network.* events since the last call (performance log)."""
    result = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        result.append(message)
    return result


def touch(driver, kind, x, y):
    points = [] if kind == "touchEnd" else [{"x": x, "y": y, "id": 1}]
    driver.execute_cdp_cmd("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})


def tap(driver, element):
    """A finger's tap on `element` (touch events, as a phone's)."""
    r = driver.execute_script(
        "const r = arguments[0].getBoundingClientRect(); return {x: r.x + r.width / 2, y: r.y + r.height / 2}", element)
    touch(driver, "touchStart", r["x"], r["y"])
    touch(driver, "touchEnd", r["x"], r["y"])


def screenshot(driver, directory, name):
    """A picture for the README: without a change's highlight half-faded or a focus ring."""
    driver.execute_script("document.querySelectorAll('.changed').forEach((e) => e.classList.remove('changed'));"
                          "document.activeElement && document.activeElement.blur()")
    path = os.path.join(directory, name)
    driver.save_screenshot(path)
    return path
