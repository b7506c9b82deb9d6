#!/usr/bin/python3
"""The web page of `msglog serve` in a real browser (headless Chromium driven
by Selenium), against a running server.

    Tests/Browser/board.py URL SCREENSHOT.png DIRECTORY

Two browsers on one stream: a drag in one shows in the other within a
second; a reload keeps the order; the history slider at an old seq shows the
old order; two conflicting drags — both land where their people meant, both
windows converge to the same order, and no card goes back; `<script>` in a
message stays text. Exits non-zero with the reason on the
first failure; saves a screenshot of the board. Chromium's profiles go
under DIRECTORY (the caller's sandbox, which it removes).
"""
import json
import sys
import tempfile
import time
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

url, screenshot, directory = sys.argv[1], sys.argv[2], sys.argv[3]
STREAM = "board"


def api(path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url.rstrip("/") + path, data=data, method="POST" if data else "GET")
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request) as response:
        return json.loads(response.read())


def server_order():
    return [item["text"] for item in api("/api/items?stream=" + STREAM)["items"]]


def check(condition, message):
    if not condition:
        print("FAILED: " + message)
        sys.exit(1)


def browser():
    options = webdriver.ChromeOptions()
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=820,640", "--user-data-dir=" + tempfile.mkdtemp(dir=directory, prefix="chromium-")]:
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.get(url + "?stream=" + STREAM + "&view=board")
    WebDriverWait(driver, 10).until(lambda d: d.execute_script("return document.body.dataset.ready === 'true'"))
    return driver


def cards(driver):
    # In one script: the page may re-render between two element lookups.
    return driver.execute_script(
        "return [...document.querySelectorAll('#board .card .text')].map((e) => e.textContent)")


def wait_for(driver, expected, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if cards(driver) == expected:
            return time.monotonic()
        time.sleep(0.02)
    check(False, "%s: expected %s, the page shows %s" % (what, expected, cards(driver)))


def follow(driver, what):
    """Calls the page's `stop()` or `follow()` of following (follow.js), which app.js gives the tests as window.msglog.follower."""
    driver.execute_script("window.msglog.follower[arguments[0]]()", what)


def drag(driver, source, target):
    board = driver.find_elements(By.CSS_SELECTOR, "#board .card")
    ActionChains(driver).click_and_hold(board[source]).pause(0.1).move_to_element(board[target]).pause(0.1).release().perform()


texts = ["Plan the sprint", "Write the spec", "Review <b>PR 12</b>", "<script>window.pwned=1</script>", "Ship it"]
for text in texts:
    api("/api/append", {"stream": STREAM, "text": text, "sender": "ann"})
a, b = browser(), browser()
try:
    wait_for(a, texts, 5, "window A after loading")
    wait_for(b, texts, 5, "window B after loading")
    # A message is text, never markup or script.
    check(a.execute_script("return window.pwned === undefined"), "a message ran as script")
    check(a.find_elements(By.CSS_SELECTOR, "#board b") == [], "a message was rendered as HTML")
    seq_before = api("/api/streams")["streams"][0]["seq"]

    # A drag in A shows in B within a second.
    drag(a, 0, 3)
    moved = texts[1:4] + texts[:1] + texts[4:]
    started = time.monotonic()
    wait_for(a, moved, 2, "window A after its drag")
    # (A shows it at once, pending; B once the server has it.)
    seen = wait_for(b, moved, 1, "window B after A's drag")
    check(server_order() == moved, "the server has %s after the drag" % server_order())
    print("drag shown in the other window after %.0f ms" % ((seen - started) * 1000))

    # A reload keeps the order.
    a.refresh()
    WebDriverWait(a, 10).until(lambda d: d.execute_script("return document.body.dataset.ready === 'true'"))
    wait_for(a, moved, 2, "window A after a reload")

    # The slider one step back (the seq before the move) shows the old order.
    slider = a.find_element(By.ID, "slider")
    check(int(slider.get_attribute("max")) == seq_before + 1, "the slider ends at %s" % slider.get_attribute("max"))
    slider.click()
    slider.send_keys(Keys.END)
    slider.send_keys(Keys.ARROW_LEFT)
    wait_for(a, texts, 2, "window A with the slider at seq %d" % seq_before)
    check("past" in a.find_element(By.TAG_NAME, "body").get_attribute("class"), "the page does not say it shows the past")
    slider.send_keys(Keys.END)
    wait_for(a, moved, 2, "window A with the slider back at the head")

    # Two conflicting drags: B stops listening (so it still shows the old
    # version), A drags, then B drags on what it shows. Both land where
    # their people meant — A's card at the top, B's card right after the
    # card it was dropped under — and both windows converge, with no card
    # going back on the way: every list B draws from its drop on has its
    # card after that card, and every list A draws has its card at the top.
    record = """
        window.drawn = [];
        new MutationObserver(() => window.drawn.push(
            [...document.querySelectorAll('#board .card .text')].map((e) => e.textContent)))
          .observe(document.getElementById('board'), {childList: true, subtree: true, characterData: true});"""
    follow(b, "stop")
    drag(a, 4, 0)
    after_a = moved[4:] + moved[:4]
    wait_for(a, after_a, 2, "window A after the first of two conflicting drags")
    a.execute_script(record)
    drag(b, 0, 2)
    b.execute_script(record)
    # B meant "Write the spec" right after the script card, as it showed it.
    meant = moved[1:3] + moved[:1] + moved[3:]
    wait_for(b, meant, 2, "window B right after its drag")
    both = after_a[:1] + after_a[2:4] + after_a[1:2] + after_a[4:]
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and server_order() != both:
        time.sleep(0.02)
    check(server_order() == both, "the server has %s after both drags; expected %s" % (server_order(), both))
    # B follows again: it catches up with A's drag and its own.
    follow(b, "follow")
    wait_for(b, both, 3, "window B after following again")
    wait_for(a, both, 3, "window A after B's drag")
    card, under = moved[0], moved[2]
    for window, name, good in [
        (b, "B", lambda order: order.index(card) == order.index(under) + 1),
        (a, "A", lambda order: order[0] == moved[4]),
    ]:
        drawn = window.execute_script("return window.drawn")
        check(drawn and all(good(order) for order in drawn if len(order) == len(texts)),
              "window %s drew a card going back: %s" % (name, drawn))
        check(window.find_element(By.ID, "note").is_displayed() is False,
              "window %s shows a note: %r" % (name, window.find_element(By.ID, "note").text))

    # Delete a card by its button: gone in both windows and on the server.
    b.refresh()
    WebDriverWait(b, 10).until(lambda d: d.execute_script("return document.body.dataset.ready === 'true'"))
    a.find_elements(By.CSS_SELECTOR, "#board .card button.delete")[1].click()
    after_delete = both[:1] + both[2:]
    wait_for(a, after_delete, 2, "window A after deleting a card")
    wait_for(b, after_delete, 2, "window B after A deleted a card")
    check(server_order() == after_delete, "the server has %s after the delete" % server_order())

    # The chat view: a message typed in A appears in B's chat.
    a.find_element(By.ID, "view-chat").click()
    b.find_element(By.ID, "view-chat").click()
    a.find_element(By.ID, "compose-sender").send_keys("bob")
    a.find_element(By.ID, "compose-text").send_keys("Standup at ten?\n")
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline and "Standup at ten?" not in b.find_element(By.ID, "chat").text:
        time.sleep(0.02)
    check("Standup at ten?" in b.find_element(By.ID, "chat").text, "the chat message did not reach window B")
    a.find_element(By.ID, "view-board").click()
    a.save_screenshot(screenshot)
    print("ok")
finally:
    a.quit()
    b.quit()
