#!/usr/bin/env python3
"""Where a page's instructions go: inclusive counts per page of a few named functions of a
callgrind profile made by cgrun.sh.

    bench/profile/summary.py OUT_FILE PAGES
"""
import re
import subprocess
import sys

out, pages = sys.argv[1], int(sys.argv[2])
ann = subprocess.run(["callgrind_annotate", "--inclusive=yes", out],
                     capture_output=True, text=True, check=True).stdout
# name shown -> pattern of the symbol (first non-recursive match counts)
ROWS = [
    ("whole process", r"PROGRAM TOTALS"),
    ("GraphQL execution (async-graphql execute_once)", r"Schema<Query,Mutation,Subscription>::execute_once::\{\{closure\}\} \["),
    ("SQLite running statements (sqlite3_step)", r"\?\?\?:sqlite3_step \["),
    ("sqlx copying every column value (sqlite3_value_dup)", r"\?\?\?:sqlite3_value_dup \["),
    ("sea-orm decoding project rows", r"entity::project::Model as sea_orm::entity::model::FromQueryResult>::from_query_result \["),
    ("sea-orm decoding team rows", r"entity::team::Model as sea_orm::entity::model::FromQueryResult>::from_query_result \["),
    ("dataloader batches (tracks, teams)", r"async_graphql::dataloader::DataLoaderInner<T>::do_load::\{\{closure\}\} \["),
    ("field guards (FieldGuard::check)", r"policy::FieldGuard as async_graphql::guard::Guard>::check::\{\{closure\}\} \["),
    ("rule lookups (Rules::get)", r"verdict::graphql::policy::Rules::get \["),
    ("parsing the query", r"async_graphql_parser::parse::executable::parse_query \["),
    ("serializing the answer", r"Serialize for async_graphql::response::Response>::serialize \["),
]
for name, pat in ROWS:
    n = None
    for line in ann.splitlines():
        if re.search(pat, line) and "'2" not in line:
            n = int(line.split()[0].replace(",", ""))
            break
    shown = f"{n // pages:,}" if n is not None else "—"
    print(f"| {name} | {shown} |")
