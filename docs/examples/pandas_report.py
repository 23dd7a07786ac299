#!/usr/bin/env python3
"""Daily figures per store from the Sales Metrics API into pandas, and their totals per store.

    export SALES_METRICS_URL=http://127.0.0.1:3000
    export SALES_METRICS_KEY=smk_...        # never in the URL: URLs end up in logs
    python3 docs/examples/pandas_report.py --from 2025-01-01 --to 2025-12-31

Needs requests and pandas (Debian: apt-get install python3-pandas python3-requests; elsewhere
pip install pandas requests). It asks for the CSV answer (`format=csv`) one page at a time
(`limit`, `offset`) while the answer says `X-Rows-Truncated: true`, waits `Retry-After` seconds
on 429 and 503, reads each page with pandas, money as integer cents (exact, never a binary
float), and prints one JSON object: the totals per store and overall, money as decimal strings.
test/contract/pandas.test.ts runs it against a live server and compares with the API's totals.
"""

import argparse
import io
import json
import os
import sys
import time
from decimal import Decimal

import pandas as pd
import requests

METRICS = ["orders", "gross_sales", "net_revenue"]
MONEY = ["gross_sales", "net_revenue"]


def cents(text):
    """'-12.3' -> -1230, exactly (Decimal, not float)."""
    return int(Decimal(text) * 100)


def amount(value):
    """-1230 -> '-12.30'."""
    return str((Decimal(int(value)) / 100).quantize(Decimal("0.01")))


def csv_pages(session, base_url, params, page_size):
    """Yields the CSV text of each page, following `offset` until no row remains."""
    offset, waits = 0, 0
    while True:
        response = session.get(
            f"{base_url}/api/reports/tabular",
            params={**params, "limit": page_size, "offset": offset},
            timeout=120,
        )
        if response.status_code in (429, 503) and waits < 5:  # rate limited, or busy
            waits += 1
            time.sleep(int(response.headers.get("Retry-After", "1")))
            continue
        if response.status_code != 200:
            error = response.json()  # errors stay JSON: `code` is stable, `error` is in French
            sys.exit(f"HTTP {response.status_code} {error.get('code')}: {error.get('error')}")
        yield response.text
        if response.headers.get("X-Rows-Truncated") != "true":
            return
        offset += page_size


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--from", dest="start", required=True, help="first UTC day, YYYY-MM-DD")
    parser.add_argument("--to", dest="end", required=True, help="last UTC day, YYYY-MM-DD")
    parser.add_argument("--timezone", default="UTC", help="IANA zone of the daily rows")
    parser.add_argument("--page-size", type=int, default=5000, help="rows per request (limit)")
    args = parser.parse_args()

    key = os.environ.get("SALES_METRICS_KEY")
    if not key:
        sys.exit("Set SALES_METRICS_KEY to an API key (smk_...).")
    base_url = os.environ.get("SALES_METRICS_URL", "http://127.0.0.1:3000").rstrip("/")

    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {key}"
    params = {
        "format": "csv",
        "dimensions": "date,store",
        "metrics": ",".join(METRICS),
        "from": args.start,
        "to": args.end,
        "timezone": args.timezone,
    }
    pages = [
        pd.read_csv(
            io.StringIO(text),
            dtype={"date": str, "store": str, "orders": "int64"},
            converters={column: cents for column in MONEY},
            keep_default_na=False,  # a text cell is never NaN
        )
        for text in csv_pages(session, base_url, params, args.page_size)
    ]
    daily = pd.concat(pages, ignore_index=True)

    per_store = daily.groupby("store")[METRICS].sum()

    def figures(orders, gross, net):
        return {"orders": int(orders), "gross_sales": amount(gross), "net_revenue": amount(net)}

    print(
        json.dumps(
            {
                "from": args.start,
                "to": args.end,
                "pages": len(pages),
                "rows": len(daily),
                "stores": {
                    store: figures(row.orders, row.gross_sales, row.net_revenue)
                    for store, row in per_store.iterrows()
                },
                "total": figures(*(daily[column].sum() for column in METRICS)),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
