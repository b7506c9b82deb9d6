#!/usr/bin/python3
"""The page's "Delete for everyone" and what it does when it learns an erase (SPEC "Forgetting on purpose"), in
headless Chromium against the real `msglog serve` on a real LMDB database: a message erased by another client
leaves the page, a reload, every list and outbox entry the page keeps, and the bytes of Chromium's profile
directory; the button is offered only where the token may erase, reached by the keyboard and by a finger,
confirmed first, and never kept offline.

    Tests/Browser/erase.py CASE --msglog BINARY --dir DIRECTORY
    Tests/Browser/erase.py --list

Prints what it measured, then "ok"; on the first failure prints "FAILED: why" and exits 1.
"""
import argparse
import json
import os
import secrets
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import page  # noqa: E402
from harness import (PHONE, Failure, HTTPError, Msglog, browser, check, events, items, open_page,  # noqa: E402
                     pages_as_they_are, run_cleanup, shown_ids, wait_ready, wait_texts, wait_until)
from page import (active, announced, appends, check_accessible, kept, note_text, pending_shown, status,  # noqa: E402
                  tab_to, tap, wait_worker)
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402

CASES = {}


def case(function):
    CASES[function.__name__.replace("_", "-")] = function
    return function


def sentinel(what):
    """A text found nowhere by chance, and not made smaller by a compressor (random hex)."""
    return "%s-%s" % (what, secrets.token_hex(16))


def profile_of(driver):
    return driver.capabilities["chrome"]["userDataDir"]


def files_holding(directory, needles):
    """The files under `directory` whose bytes hold one of `needles` (bytes), as (needle index, relative path)."""
    found = []
    for root, _, names in os.walk(directory):
        for name in names:
            path = os.path.join(root, name)
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except OSError:  # a lock or a socket
                continue
            for i, needle in enumerate(needles):
                if needle in data:
                    found.append((i, os.path.relpath(path, directory)))
    return found


def text_needles(texts):
    """Each text as Chromium may store it: UTF-8 (V8 keeps one-byte strings so), and UTF-16."""
    return [t.encode() for t in texts] + [t.encode("utf-16-le") for t in texts]


def key_files(profile):
    """The sealing keys the page keeps in the origin's private file system (seal.js): each file's bytes."""
    keys = []
    for root, _, names in os.walk(os.path.join(profile, "Default", "File System")):
        for name in names:
            path = os.path.join(root, name)
            size = os.path.getsize(path)
            if size == 32:
                with open(path, "rb") as f:
                    keys.append(f.read())
    return keys


def erase_buttons(driver, view):
    """The "Delete for everyone" buttons shown: their accessible names."""
    return driver.execute_script(
        "return [...document.querySelectorAll('#%s button.erase')].filter((b) => b.getClientRects().length)"
        ".map((b) => b.getAttribute('aria-label'))" % view)


def dialog_open(driver):
    return driver.execute_script("return document.getElementById('erase-dialog').open")


@case
def an_erased_message_leaves_the_page_and_the_browser(ctx):
    """Another client erases two messages while the page is open: one followed live, one while the server is away
    and the page holds an edit of it in its outbox. Both leave the screen; a reload does not bring them back; the
    page's kept lists and outbox no longer hold their texts; and the bytes of every file of Chromium's profile hold
    none of them, nor the key they were sealed under — while the texts still kept are there."""
    m = Msglog(ctx.msglog, ctx.dir)
    live, away, edited, kept_text = sentinel("live"), sentinel("away"), sentinel("edited"), sentinel("kept")
    m.import_lines(appends("room", ["hello", live, kept_text], sender="bob") + appends("room", [away], sender="me"))
    ids = {t: i for i, t in page.listed(m, "room")}
    server = m.serve()
    port = server.port
    driver = browser(ctx.dir)
    profile = profile_of(driver)
    driver.get(server.url)
    driver.execute_script("localStorage.setItem('msglog.sender', 'me')")
    open_page(driver, server, "room", "chat")
    wait_texts(driver, "chat", ["hello", live, kept_text, away], "the list read")
    wait_worker(driver)
    wait_until("the list is kept", lambda: live in json.dumps(kept(driver)["lists"]), 30)
    keys_before = key_files(profile)
    check(len(keys_before) == 1, "the page keeps %d sealing keys, not one" % len(keys_before))
    plain = files_holding(profile, text_needles([live, kept_text]))
    check(plain == [], "a text the page keeps is in the profile's files as it is (not sealed): %r" % plain)
    sealed_with = files_holding(profile, keys_before)
    check(sealed_with and all("File System" in path for _, path in sealed_with),
          "the sealing key is where it should not be, or nowhere: %r" % sealed_with)

    # Erased by another client (the command line) while the page follows: gone from the screen.
    m.run("erase", ids[live], "--stream", "room")
    wait_texts(driver, "chat", ["hello", kept_text, away], "after the live erase")

    # The server away: the page edits its own message, kept in its outbox; meanwhile it is erased.
    server.stop()
    wait_until("the page says it is offline", lambda: status(driver)[0] == "offline", 30)
    driver.execute_script(
        "document.querySelector('[data-id=\"%s\"] button.edit').click()" % ids[away])
    box = driver.find_element(By.CSS_SELECTOR, ".edit-form textarea")
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(edited, Keys.ENTER)
    wait_until("the edit is kept and shown pending", lambda: edited in pending_shown(driver))
    check(edited in json.dumps(kept(driver)["outbox"]), "the edit is not in the outbox")
    m.run("erase", ids[away], "--stream", "room")
    server = m.serve("127.0.0.1:%d" % port)
    wait_texts(driver, "chat", ["hello", kept_text], "after the erase the page learned when the server came back", 30)
    wait_until("the outbox no longer holds the edit", lambda: kept(driver)["outbox"] == [], 30)
    check(all(e.get("text") != edited for e in events(server, "room")), "the edit of an erased message was applied")
    print("the page says: %s" % (" ".join(note_text(driver).replace("Dismiss", "").split()) or "nothing"))

    # Everything the page keeps: neither erased text, nor the edit; the text still kept is.
    def keeps():
        return json.dumps(kept(driver))
    wait_until("the kept lists no longer hold the erased texts",
               lambda: not any(t in keeps() for t in (live, away, edited)) and kept_text in keeps(), 30)
    # The bytes: the key the erased texts were sealed under is gone from every file, and no file holds them.
    wait_until("the old sealing key is gone from the profile", lambda: files_holding(profile, keys_before) == [], 30)
    found = files_holding(profile, text_needles([live, away, edited]))
    check(found == [], "the profile's files hold an erased text: %r" % found)

    # A reload: the erased messages stay gone, the others are there.
    driver.refresh()
    wait_ready(driver)
    wait_texts(driver, "chat", ["hello", kept_text], "after a reload")
    check(all(i["text"] not in (live, away) for i in items(server, "room")), "the server still lists an erased message")

    # The page closes its database (the browser quits): every file of its profile, read whole.
    keys_after = key_files(profile)
    driver.quit()
    found = files_holding(profile, text_needles([live, away, edited]) + keys_before)
    check(found == [], "after the browser quit, the profile's files hold an erased text or its key: %r" % found)
    check(len(keys_after) == 1 and keys_after != keys_before, "the key was not renewed: %d keys" % len(keys_after))
    print("profile files read: %d; none holds an erased text or the key it was sealed under" % sum(
        len(names) for _, _, names in os.walk(profile)))


@case
def delete_for_everyone_by_keyboard_and_finger(ctx):
    """Only a token that may erase sees "Delete for everyone"; from the keyboard alone it opens a confirmation
    (Escape keeps the message, the dialog's button erases it); on a phone a finger does the same to a card; with
    the server away it is not kept to send later, and the page says so."""
    m = Msglog(ctx.msglog, ctx.dir)
    m.import_lines(appends("team/chat", ["first", "second", "third"], sender="bob"))
    m.import_lines(appends("team/board", ["teal", "gold", "crimson", "plum"], sender="bob"))
    writer = m.run("token", "add", "writer", "--write", "*").strip()
    mod = m.run("token", "add", "mod", "--erase", "team/*").strip()
    operator = "operator-secret-0123456789"  # the test's own reads of the server
    server = m.serve(token=operator)
    port = server.port

    # A token that may only write: no button.
    driver = browser(ctx.dir)
    open_page(driver, server, "team/chat", "chat", "#token=" + writer)
    wait_texts(driver, "chat", ["first", "second", "third"], "with the writer's token")
    wait_until("live", lambda: status(driver)[0] == "live")
    wait_until("the page knows whose the token is", lambda: driver.execute_script(
        "return !document.getElementById('signed-in').hidden"))
    check(erase_buttons(driver, "chat") == [], "a token that may not erase is offered %r" % erase_buttons(driver, "chat"))

    # The moderator, from the keyboard alone.
    driver.get("about:blank")
    open_page(driver, server, "team/chat", "chat", "#token=" + mod)
    wait_until("the erase buttons are offered", lambda: len(erase_buttons(driver, "chat")) == 3, 30)
    check(erase_buttons(driver, "chat")[1] == "Delete for everyone: 'second'", "named %r" % erase_buttons(driver, "chat"))
    check_accessible(driver, "the chat with Delete for everyone")
    presses = tab_to(driver, "Delete for everyone")
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    wait_until("the confirmation opens", lambda: dialog_open(driver))
    check(driver.execute_script("return document.activeElement.textContent") == "Cancel", "the dialog's focus is not on Cancel")
    words = driver.execute_script("return document.getElementById('erase-text').textContent")
    check("'first'" in words and "cannot be undone" in words, "the dialog says %r" % words)
    check_accessible(driver, "the confirmation")
    ActionChains(driver).send_keys(Keys.ESCAPE).perform()
    wait_until("Escape closes the dialog", lambda: not dialog_open(driver))
    check(driver.execute_script("return document.activeElement.getAttribute('aria-label')") == "Delete for everyone: 'first'",
          "the focus did not go back to the button")
    check([i["text"] for i in items(server, "team/chat")] == ["first", "second", "third"], "Escape erased something")
    ActionChains(driver).send_keys(Keys.ENTER).perform()
    wait_until("the confirmation opens again", lambda: dialog_open(driver))
    ActionChains(driver).send_keys(Keys.TAB, Keys.ENTER).perform()
    wait_texts(driver, "chat", ["second", "third"], "after Delete for everyone from the keyboard")
    check([i["text"] for i in items(server, "team/chat")] == ["second", "third"], "the server still lists it")
    erases = [e for e in events(server, "team/chat") if e["op"] == "erase"]
    check(len(erases) == 1, "the server has %d erase events" % len(erases))
    check(active(driver) == "main", "the focus went to %r, not the stream" % active(driver))
    check(announced(driver) == "Deleted for everyone.", "the page said %r" % announced(driver))
    print("Tab reached Delete for everyone in %d presses" % presses)

    # A phone: a finger on a card's button, then on the dialog's.
    phone = browser(ctx.dir, PHONE, touch=True)
    open_page(phone, server, "team/board", "board", "#token=" + mod)
    wait_until("the phone offers the erase buttons", lambda: len(erase_buttons(phone, "board")) == 4, 30)
    wait_worker(phone)
    fits = phone.execute_script("""
        const b = document.querySelectorAll('#board button.erase')[1].getBoundingClientRect();
        return { scroll: document.documentElement.scrollWidth, right: b.right, height: b.height }""")
    check(fits["scroll"] <= PHONE[0] and fits["right"] <= PHONE[0] and fits["height"] >= 32,
          "the button does not fit the phone, or is small for a finger: %r" % fits)
    # The buttons leave the card's text room for a word: "crimson" is not broken into "crimso" and "n" (each of
    # these one-word texts is one line).
    lines = phone.execute_script("""
        return [...document.querySelectorAll('#board .card .text')].map((t) => {
          const range = document.createRange();
          range.selectNodeContents(t);
          return [t.textContent, new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size];
        })""")
    check(all(n == 1 for _, n in lines), "a card's word broken over lines by its buttons (text, lines): %r" % lines)
    tap(phone, phone.find_elements(By.CSS_SELECTOR, "#board button.erase")[1])
    wait_until("the phone's confirmation opens", lambda: dialog_open(phone))
    check_accessible(phone, "the confirmation on a phone")
    tap(phone, phone.find_element(By.CSS_SELECTOR, "#erase-dialog button.danger"))
    wait_texts(phone, "board", ["teal", "crimson", "plum"], "after a finger's Delete for everyone")
    check([i["text"] for i in items(server, "team/board")] == ["teal", "crimson", "plum"], "the server still lists 'gold'")

    # A card deleted here (its note quotes it, with Undo), then erased by another client: the note goes with it.
    plum = [i["id"] for i in items(server, "team/board") if i["text"] == "plum"][0]
    page.delete_card(phone, "plum")
    wait_until("the note quotes the deleted card", lambda: "Deleted card 'plum'" in note_text(phone), 30)
    # The delete on the server first: erased before it arrives, it would be refused, and the note would say so.
    wait_until("the delete reached the server", lambda: "plum" not in [i["text"] for i in items(server, "team/board")], 30)
    m.run("erase", plum, "--stream", "team/board")
    try:
        wait_until("the note quoting the erased card goes", lambda: note_text(phone) == "", 30)
    except Failure:
        raise Failure("the note quoting the erased card stayed for 30 s: %r" % note_text(phone)) from None
    check("plum" not in page.page_text(phone), "the phone still shows 'plum' somewhere")

    # The server away: not kept to send later, and said.
    server.stop()
    wait_until("the phone says it is offline", lambda: status(phone)[0] == "offline", 30)
    tap(phone, phone.find_elements(By.CSS_SELECTOR, "#board button.erase")[0])
    wait_until("the confirmation opens offline", lambda: dialog_open(phone))
    tap(phone, phone.find_element(By.CSS_SELECTOR, "#erase-dialog button.danger"))
    wait_until("the page says it needs the server", lambda: "needs the server" in note_text(phone), 30)
    print("offline: %s" % " ".join(note_text(phone).split()))
    check(kept(phone)["outbox"] == [], "the erase was kept in the outbox: %r" % kept(phone)["outbox"])
    check(pending_shown(phone) == [], "the page shows a change pending: %r" % pending_shown(phone))
    wait_texts(phone, "board", ["teal", "crimson"], "offline, the card stays")
    server = m.serve("127.0.0.1:%d" % port, token=operator)
    wait_until("the phone is live again", lambda: status(phone)[0] == "live", 30)
    check([i["text"] for i in items(server, "team/board")] == ["teal", "crimson"],
          "something was erased when the server came back: %r" % items(server, "team/board"))
    check(shown_ids(phone) == [i["id"] for i in items(server, "team/board")], "the phone shows other cards than the server")


# MARK: - Running


class Context:
    pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("case", nargs="?")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--msglog")
    parser.add_argument("--dir")
    args = parser.parse_args()
    if args.list:
        print("\n".join(CASES))
        return 0
    ctx = Context()
    ctx.msglog, ctx.dir = os.path.abspath(args.msglog), os.path.abspath(args.dir)
    try:
        import axe_selenium_python.axe as axe
        page.AXE_SCRIPT = axe._DEFAULT_SCRIPT
    except ImportError:
        print("FAILED: axe-core is not installed (scripts/setup --test installs axe-selenium-python)")
        return 1
    try:
        CASES[args.case](ctx)
    except (Failure, HTTPError) as failure:
        print("FAILED: %s" % failure)
        print(pages_as_they_are())
        return 1
    except Exception:  # Selenium's, a script's: the traceback follows what the windows show
        print(pages_as_they_are())
        raise
    finally:
        run_cleanup()
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
