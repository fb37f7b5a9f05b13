#!/usr/bin/env python3
"""The SQL surface, as TAP: what vdsql registers in SQLite (modules and functions, asked
of SQLite itself) is exactly what vdsql_relations() lists, every dataset argument is
called url, and every relation and function has a description and appears in a
runnable example (a ```sql block) of docs/."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from taplib import TOP, ok, plan, query  # noqa: E402

listed = query("SELECT name, kind, arguments, columns, description FROM vdsql_relations();")
names = {(r["name"], r["kind"] == "function") for r in listed}
# what SQLite has registered beyond a bare shell's own modules and functions
mods = {r["name"] for r in query("SELECT name FROM pragma_module_list;")}
fns = {r["name"] for r in query("SELECT name FROM pragma_function_list WHERE builtin = 0;")}
ours_mods = {m for m in mods if m.startswith(("vds_", "lindi_", "tar_", "vtkhdf_", "vdsql_", "store_"))}
ours_fns = {f for f in fns if f.startswith(("vds_", "lindi_", "tar_", "vtkhdf_", "vdsql_", "store_"))}
rel_names = {n for n, fn in names if not fn}
fn_names = {n for n, fn in names if fn}
ok(ours_mods == rel_names, "every module vdsql registers is listed by vdsql_relations() and no other",
   "registered only: %s\nlisted only: %s" % (sorted(ours_mods - rel_names), sorted(rel_names - ours_mods)))
ok(ours_fns == fn_names, "every function vdsql registers is listed by vdsql_relations() and no other",
   "registered only: %s\nlisted only: %s" % (sorted(ours_fns - fn_names), sorted(fn_names - ours_fns)))
no_doc = [r["name"] for r in listed if not r["description"]]
ok(not no_doc, "every relation and function has a description", no_doc)
# the dataset argument: the first argument of every relation that takes one is `url`
bad = [(r["name"], r["arguments"]) for r in listed
       if r["arguments"] and not r["name"].startswith("vdsql_") and not re.match(r"\[?url\b", r["arguments"])]
ok(not bad, "the dataset argument of every relation and function is called url", bad)

examples = ""
for doc in sorted(os.listdir(os.path.join(TOP, "docs"))):
    if doc.endswith(".md"):
        text = open(os.path.join(TOP, "docs", doc), encoding="utf-8").read()
        examples += "\n".join(re.findall(r"```sql\n(.*?)```", text, re.S))
missing = sorted(n for n, _ in names if not re.search(r"\b%s\b" % re.escape(n), examples))
ok(not missing, "every relation and function appears in a runnable example of docs/", missing)
sys.exit(plan())
