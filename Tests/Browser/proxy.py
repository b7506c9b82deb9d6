"""The page behind docs/SERVER.md's reverse proxy (issue 35.1): headless
Chromium opens it at its public origin, https://chat.example.org:PORT
(nginx ending TLS, its certificate trusted by its key's hash, the name
resolved to nginx's address), writes a message and sees it land: no longer
pending, and in the log as `serve` answers for it.

    proxy.py --origin https://chat.example.org:PORT --serve http://127.0.0.1:PORT2 --certificate CERT --dir DIR

Prints "ok" when it did, "FAILED: …" otherwise.
"""
import argparse
import base64
import hashlib
import subprocess
import sys
import urllib.parse

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from harness import Failure, HTTPError, api, browser, check, run_cleanup, wait_ready, wait_until


def spki_hash(certificate):
    """The base64 SHA-256 of the certificate's public key, as Chromium's --ignore-certificate-errors-spki-list takes
    it: that key is trusted as a real authority's would be (a secure context, unlike ignoring every error)."""
    key = subprocess.run(["openssl", "x509", "-in", certificate, "-noout", "-pubkey"], capture_output=True, check=True)
    der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "der"], input=key.stdout, capture_output=True,
                         check=True)
    return base64.b64encode(hashlib.sha256(der.stdout).digest()).decode()


PENDING = """
  return [...document.querySelectorAll('[data-id]')].filter((e) => e.getClientRects().length
    && e.dataset.pending === 'true').map((e) => e.querySelector('.text').textContent)"""

TEXTS = "return [...document.querySelectorAll('#chat [data-id] .text')].map((e) => e.textContent)"


def the_page_writes_through_the_proxy(origin, serve, certificate, directory):
    host = urllib.parse.urlsplit(origin).hostname
    driver = browser(directory, arguments=["--host-resolver-rules=MAP %s 127.0.0.1" % host,
                                           "--ignore-certificate-errors-spki-list=" + spki_hash(certificate)])
    driver.get(origin + "/?" + urllib.parse.urlencode({"stream": "proxy", "view": "chat"}))
    wait_ready(driver)
    check(driver.execute_script("return window.isSecureContext"), "the page is no secure context")
    driver.find_element(By.ID, "compose-text").send_keys("through nginx", Keys.ENTER)
    wait_until("the page shows its message", lambda: driver.execute_script(TEXTS) == ["through nginx"])
    wait_until("the message is no longer pending (the server took it)", lambda: driver.execute_script(PENDING) == [],
               30)
    stored = [item["text"] for item in api(serve, "/api/items?stream=proxy")["items"]]
    check(stored == ["through nginx"], "serve holds %r" % stored)


def main():
    parser = argparse.ArgumentParser()
    for name in ["--origin", "--serve", "--certificate", "--dir"]:
        parser.add_argument(name, required=True)
    args = parser.parse_args()
    try:
        the_page_writes_through_the_proxy(args.origin, args.serve, args.certificate, args.dir)
    except (Failure, HTTPError) as failure:
        print("FAILED: %s" % failure)
        return 1
    finally:
        run_cleanup()
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
