"""bench-forget's trim rows on PostgreSQL (`scripts/bench-forget --postgres [N]`):
trim of the older half of a chat of N events vs `export | import` of it into
a new database (best of 3), and msglog's tables' size after trim + purge vs a
fresh import of the trimmed log's export. Copies are made with
`CREATE DATABASE … TEMPLATE`; the cluster is a throwaway one
(scripts/pg-cluster), stopped at the end."""
import os, subprocess, tempfile, time, uuid


def main(root, msglog, events):
    cluster = tempfile.mkdtemp(prefix="msglog-bench-pg-")
    started = subprocess.run([os.path.join(root, "scripts", "pg-cluster"), "start", cluster], check=True,
                             capture_output=True, text=True).stdout
    variables = dict(line.split("=", 1) for line in started.split() if "=" in line)
    admin = variables["MSGLOG_TEST_PG"].strip("'\"")
    server = admin.rsplit("/", 1)[0]
    try:
        measure(msglog, events, server)
    finally:
        subprocess.run([os.path.join(root, "scripts", "pg-cluster"), "stop", cluster], check=False)


def measure(msglog, events, server):
    def psql(sql, db="postgres"):
        return subprocess.run(["psql", "-qAt", server + "/" + db, "-c", sql], check=True, capture_output=True,
                              text=True).stdout

    def run(*args):
        started = time.perf_counter()
        subprocess.run([msglog] + list(args), check=True, stdout=subprocess.DEVNULL)
        return time.perf_counter() - started

    def size(db):
        return int(psql("SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n "
                        "ON n.oid = c.relnamespace WHERE n.nspname = 'msglog' AND c.relkind = 'r'", db))

    def database(name, template=None):
        psql("DROP DATABASE IF EXISTS %s" % name)
        psql("CREATE DATABASE %s%s" % (name, " TEMPLATE " + template if template else ""))
        return server + "/" + name

    with tempfile.TemporaryDirectory(prefix="msglog-bench-forget-pg-") as scratch:
        lines = os.path.join(scratch, "chat.jsonl")
        window, live, written = 10_000, [], 0
        with open(lines, "w") as f:
            while written < events:
                if len(live) >= window and written % 2 == 1:
                    f.write('{"op":"remove","id":"%s"}\n' % live.pop(0))
                else:
                    ident = str(uuid.uuid4())
                    live.append(ident)
                    f.write('{"op":"append","id":"%s","text":"message %d, a line of an ordinary length"}\n'
                            % (ident, written))
                written += 1
        chat = database("bench_chat")
        run("--db", chat, "import", lines)
        horizon = events // 2
        trims, copies = [], []
        for i in range(3):
            copy = database("bench_copy_%d" % i, template="bench_chat")
            trims.append(run("--db", copy, "trim", "--before", str(horizon)))
            export = os.path.join(scratch, "export.jsonl")
            fresh = database("bench_fresh_%d" % i)
            started = time.perf_counter()
            with open(export, "w") as out:
                subprocess.run([msglog, "--db", chat, "export"], check=True, stdout=out)
            subprocess.run([msglog, "--db", fresh, "import", export], check=True, stdout=subprocess.DEVNULL)
            copies.append(time.perf_counter() - started)
        trimmed = server + "/bench_copy_2"
        run("--db", trimmed, "purge")
        export = os.path.join(scratch, "trimmed.jsonl")
        with open(export, "w") as out:
            subprocess.run([msglog, "--db", trimmed, "export"], check=True, stdout=out)
        again = database("bench_again")
        run("--db", again, "import", export)
        kept, imported = size("bench_copy_2"), size("bench_again")
        trim, copy = min(trims), min(copies)
        print("| PostgreSQL `trim` of the older half (a chat of %d events) vs `export \\| import` | %.2f s | %.2f s "
              "| %.2fx | <= 0.5x |" % (events, trim, copy, trim / copy))
        print("| PostgreSQL tables' size after `trim` + `purge` vs a fresh import of its export | %.1f MiB | %.1f MiB "
              "| %.2fx | <= 1.2x |" % (kept / 2**20, imported / 2**20, kept / imported))
