"""Write a multi-hop ("across sections") golden set: each question needs two or more sections, named
by a phrase that only the needed section contains; the phrase is resolved to the chunk id holding
it in a given index (so the set follows the chunker), and every needed chunk gets grade 2.

    python bench/structure/make_multihop.py sample --index IDX > bench/structure/multihop_sample.jsonl
    python bench/structure/make_multihop.py nodejs --index IDX > bench/structure/multihop_nodejs.jsonl

A phrase found in no chunk, or in chunks of two documents, is an error naming the question.
"""

from __future__ import annotations

import json
import sys

from citewise.index import Index

# (question, [(doc id, phrase only the needed section contains), ...])
SAMPLE = [
    (
        "What does error E-1006 mean and what is the daily limit on each plan?",
        [("errors/E-1006", "What it means"), ("help/billing/daily-transaction-limits", "The limit for each plan")],
    ),
    (
        "I got E-1007 on a big export; how do bulk export jobs in the REST API work instead?",
        [("errors/E-1007", "What it means"), ("help/exports/api-export", "Bulk export jobs")],
    ),
    (
        "Compare the refund window for annual prepaid Starter and annual prepaid Pro.",
        [
            ("help/refunds/refunds-starter", "Annual prepaid Starter"),
            ("help/refunds/refunds-pro", "Annual prepaid Pro"),
        ],
    ),
    (
        "How do refunds differ between the Pro plan and the Enterprise plan?",
        [
            ("help/refunds/refunds-pro", "# Refunds on the Pro plan"),
            ("help/refunds/refunds-enterprise", "# Refunds on the Enterprise plan"),
        ],
    ),
    (
        "E-1003 appeared after our Entra ID certificate rotation; how should the rotation be done?",
        [("errors/E-1003", "What it means"), ("help/sso/azure-ad", "## Certificate rotation")],
    ),
    (
        "E-1005 says an attribute is missing; which claims does Entra ID send and how do I map them?",
        [("errors/E-1005", "What it means"), ("help/sso/azure-ad", "## Attributes and claims")],
    ),
    (
        "The accounting connection expired (E-1008); how often does the QuickBooks sync run once reconnected?",
        [("errors/E-1008", "What it means"), ("help/exports/accounting-export", "## How often the sync runs")],
    ),
    (
        "What is the difference between a webhook signature mismatch and a disabled webhook endpoint?",
        [("errors/E-1009", "What it means"), ("errors/E-1010", "What it means")],
    ),
    (
        "Should I export invoices as CSV or through the API, and what are the API rate limits per plan?",
        [("help/exports/csv-export", "## Creating an export"), ("help/exports/api-export", "## Rate limits")],
    ),
    (
        "How does SCIM provisioning in OneLogin compare with Directory Sync for Google Workspace?",
        [
            ("help/sso/onelogin", "## SCIM provisioning (Enterprise)"),
            ("help/sso/google-workspace", "## User provisioning with Ledgerly Directory Sync"),
        ],
    ),
    (
        "How do I connect Okta to Ledgerly, and what do I do when the signature cannot be verified?",
        [
            ("help/sso/okta", "## Connect Okta to Ledgerly"),
            ("help/sso/saml-troubleshooting", "### Signature could not be verified"),
        ],
    ),
    (
        "What do the plans cost and how is an upgrade in the middle of the cycle charged?",
        [("help/billing/plans-and-pricing", "## Plan comparison"), ("help/billing/plans-and-pricing", "### Upgrading")],
    ),
    (
        "On Enterprise, how do I pay by wire transfer and how do I dispute an invoice?",
        [
            ("help/billing/payment-methods", "## Paying by wire transfer (Enterprise)"),
            ("help/billing/invoices-and-receipts", "## Disputing an invoice"),
        ],
    ),
    (
        "My card was declined with E-1001; which other payment methods can the subscription use?",
        [
            ("errors/E-1001", "What it means"),
            ("help/billing/payment-methods", "Credit or debit card (Visa, Mastercard"),
        ],
    ),
    (
        "Why did E-1002 happen on renewal, and what is strong customer authentication?",
        [("errors/E-1002", "What it means"), ("help/billing/payment-methods", "strong customer authentication")],
    ),
    (
        "What happens when a payment would exceed the daily limit, and how do I request a higher limit on Pro?",
        [
            ("help/billing/daily-transaction-limits", "## What happens when you reach the limit"),
            ("help/billing/daily-transaction-limits", "## Requesting a higher limit"),
        ],
    ),
    (
        "How do I read the attributes in a SAML response, and what does a missing required attribute mean?",
        [("help/sso/saml-troubleshooting", "## Reading a response"), ("errors/E-1005", "What it means")],
    ),
    (
        "Syncing to Xero fails with a currency mismatch: what does E-1004 mean and what does the sync send?",
        [
            ("errors/E-1004", "What it means"),
            ("help/exports/accounting-export", "# Sync with QuickBooks Online and Xero"),
        ],
    ),
    (
        "Can I get a single unused seat refunded on Starter, and is that different on Pro?",
        [
            ("help/refunds/refunds-starter", "I was charged for a seat I did not need"),
            ("help/refunds/refunds-pro", "partial refunds for seats"),
        ],
    ),
    (
        "Which plans can use single sign-on with Okta and with Google Workspace?",
        [
            ("help/sso/okta", "## Before you start"),
            ("help/sso/google-workspace", "# Set up single sign-on with Google Workspace"),
        ],
    ),
    (
        "Enterprise annual prepaid contract: can I get a refund after 60 days, and how is the wire transfer referenced?",
        [
            ("help/refunds/refunds-enterprise", "### Annual prepaid contracts"),
            ("help/billing/payment-methods", "LGYREF-"),
        ],
    ),
    (
        "How do I rotate the SAML signing certificate in Okta and in Google Workspace?",
        [
            ("help/sso/okta", "## Rotating the Okta signing certificate"),
            ("help/sso/google-workspace", "## Certificate rotation"),
        ],
    ),
]

NODEJS = [
    (
        "How do I read a file with fs.readFile and then delete it with fs.unlink?",
        [
            ("nodejs/fs", "### `fs.readFile(path[, options], callback)`"),
            ("nodejs/fs", "### `fs.unlink(path, callback)`"),
        ],
    ),
    (
        "Spawn a child process and pipe its stdout into a Transform stream",
        [
            ("nodejs/child_process", "### `child_process.spawn(command[, args][, options])`"),
            ("nodejs/stream", "#### Class: `stream.Transform`"),
        ],
    ),
    (
        "How do I create an HTTP server and parse the request URL with the WHATWG URL class?",
        [("nodejs/http", "## `http.createServer([options][, requestListener])`"), ("nodejs/url", "### Class: `URL`")],
    ),
    (
        "Run CPU-heavy work in a worker thread and send the result back with postMessage",
        [
            ("nodejs/worker_threads", "## Class: `Worker`"),
            ("nodejs/worker_threads", "### `port.postMessage(value[, transferList])`"),
        ],
    ),
    (
        "Hash a password with crypto.scrypt and compare it with crypto.timingSafeEqual",
        [
            ("nodejs/crypto", "### `crypto.scrypt(password, salt, keylen[, options], callback)`"),
            ("nodejs/crypto", "### `crypto.timingSafeEqual(a, b)`"),
        ],
    ),
    (
        "Emit a custom event with EventEmitter and remove the listener afterwards",
        [
            ("nodejs/events", "### `emitter.emit(eventName[, ...args])`"),
            ("nodejs/events", "### `emitter.removeListener(eventName, listener)`"),
        ],
    ),
    (
        "Join path segments and get the file extension of the result",
        [("nodejs/path", "## `path.join([...paths])`"), ("nodejs/path", "## `path.extname(path)`")],
    ),
    (
        "Handle SIGINT in a process and exit with a specific exit code",
        [("nodejs/process", "### Signal events"), ("nodejs/process", "## `process.exit([code])`")],
    ),
    (
        "Convert a Buffer to a base64 string and back to a Buffer",
        [
            ("nodejs/buffer", "### `buf.toString([encoding[, start[, end]]])`"),
            ("nodejs/buffer", "### Static method: `Buffer.from(string[, encoding])`"),
        ],
    ),
    (
        "Resolve a hostname with dns.lookup and then open a TCP connection with net.connect",
        [
            ("nodejs/dns", "## `dns.lookup(hostname[, options], callback)`"),
            ("nodejs/net", "### `net.connect(options[, connectListener])`"),
        ],
    ),
    (
        "Schedule work with setImmediate versus process.nextTick: which runs first?",
        [
            ("nodejs/timers", "### `setImmediate(callback[, ...args])`"),
            ("nodejs/process", "## `process.nextTick(callback[, ...args])`"),
        ],
    ),
    (
        "Watch a directory for changes with fs.watch and read the list of files with fs.readdir",
        [
            ("nodejs/fs", "### `fs.watch(filename[, options][, listener])`"),
            ("nodejs/fs", "### `fs.readdir(path[, options], callback)`"),
        ],
    ),
    (
        "Compress a file with zlib gzip and pipe it with stream.pipeline",
        [
            ("nodejs/zlib", "## `zlib.createGzip([options])`"),
            ("nodejs/stream", "### `stream.pipeline(source[, ...transforms], destination, callback)`"),
        ],
    ),
    (
        "Make an HTTPS request with a custom agent that keeps connections alive",
        [("nodejs/https", "## `https.request(options[, callback])`"), ("nodejs/http", "### `new Agent([options])`")],
    ),
    (
        "Read a line at a time from a file with readline and fs.createReadStream",
        [
            ("nodejs/readline", "## `readline.createInterface(options)`"),
            ("nodejs/fs", "### `fs.createReadStream(path[, options])`"),
        ],
    ),
    (
        "Get the number of CPUs with os.cpus and start that many cluster workers",
        [("nodejs/os", "## `os.cpus()`"), ("nodejs/cluster", "## `cluster.fork([env])`")],
    ),
    (
        "Assert deep equality in a test and check that a function throws",
        [
            ("nodejs/assert", "## `assert.deepStrictEqual(actual, expected[, message])`"),
            ("nodejs/assert", "## `assert.throws(fn[, error][, message])`"),
        ],
    ),
    (
        "Encrypt data with crypto.createCipheriv and generate the key with crypto.randomBytes",
        [
            ("nodejs/crypto", "### `crypto.createCipheriv(algorithm, key, iv[, options])`"),
            ("nodejs/crypto", "### `crypto.randomBytes(size[, callback])`"),
        ],
    ),
    (
        "Promisify a callback API with util.promisify and use it with fs.stat",
        [("nodejs/util", "## `util.promisify(original)`"), ("nodejs/fs", "### `fs.stat(path[, options], callback)`")],
    ),
    (
        "Use AsyncLocalStorage to keep a request id across an HTTP request handler",
        [
            ("nodejs/async_context", "## Class: `AsyncLocalStorage`"),
            ("nodejs/http", "## `http.createServer([options][, requestListener])`"),
        ],
    ),
    (
        "Create a TCP server with net.createServer and stop accepting connections with server.close",
        [
            ("nodejs/net", "## `net.createServer([options][, connectionListener])`"),
            ("nodejs/net", "### `server.close([callback])`"),
        ],
    ),
    (
        "Parse a query string from a URL with URLSearchParams and format the URL back with url.format",
        [("nodejs/url", "### Class: `URLSearchParams`"), ("nodejs/url", "### `url.format(URL[, options])`")],
    ),
]


def main() -> None:
    which = sys.argv[1]
    index = sys.argv[sys.argv.index("--index") + 1]
    idx = Index.open(index)
    cv = idx.store.chunk_versions()
    qs = {"sample": SAMPLE, "nodejs": NODEJS}[which]
    for n, (question, needs) in enumerate(qs, start=1):
        relevant = {}
        for doc, phrase in needs:
            if doc not in cv and doc.split("/", 1)[-1] in cv:  # the corpus folder itself was ingested
                doc = doc.split("/", 1)[-1]
            if doc not in cv:
                sys.exit(f"q{n}: no document {doc} in {index}")
            chunks = idx.store.get_chunks(sorted(c for c, _, _ in cv[doc]))
            hits = sorted(c for c, sc in chunks.items() if phrase in sc.text)
            if not hits:
                sys.exit(f"q{n}: phrase {phrase!r} is in no chunk of {doc}")
            relevant[hits[0]] = 2
        if len(relevant) < 2:
            print(f"note: q{n} needs one chunk only here ({list(relevant)}); kept out", file=sys.stderr)
            continue
        print(json.dumps({"id": f"mh{n:02d}", "kind": "multi_hop", "text": question, "relevant": relevant}))


if __name__ == "__main__":
    main()
