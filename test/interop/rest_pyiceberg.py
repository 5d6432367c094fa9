"""PyIceberg's REST catalog against Floe's REST endpoint, one step per run (test/interop/rest-endpoint.interop.ts).

argv[1] is JSON: {"uri", "op", "table", "ids"?}. Ops: "create_append" creates the table (id long,
name string) and appends rows with the given ids; "append" appends to an existing table (its
schema); "scan" returns the ids it reads. Prints one JSON line.
"""
import json
import os
import sys

import pyarrow as pa
from pyiceberg.catalog import load_catalog


def main():
    req = json.loads(sys.argv[1])
    catalog = load_catalog(
        "floe_rest",
        **{
            "type": "rest",
            "uri": req["uri"],
            "py-io-impl": "pyiceberg.io.fsspec.FsspecFileIO",
            # Only for an S3-compatible server (here s3rver); leave it out on AWS:
            "s3.endpoint": os.environ["AWS_ENDPOINT_URL_S3"],
            "s3.region": "us-east-1",
        },
    )
    ns, name = req["table"].rsplit(".", 1)
    op = req["op"]
    if op == "create_append":
        schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])
        table = catalog.create_table(f"{ns}.{name}", schema=schema)
        table.append(pa.table({"id": req["ids"], "name": [f"py{i}" for i in req["ids"]]}, schema=schema))
        out = {"location": table.location(), "metadata_location": table.metadata_location}
    elif op == "append":
        table = catalog.load_table(f"{ns}.{name}")
        arrow_schema = table.schema().as_arrow()
        cols = {f.name: ([int(i) for i in req["ids"]] if f.name == "id" else [f"py{i}" for i in req["ids"]] if f.name == "name" else [None] * len(req["ids"])) for f in arrow_schema}
        table.append(pa.table(cols, schema=arrow_schema))
        out = {"metadata_location": table.metadata_location}
    elif op == "scan":
        table = catalog.load_table(f"{ns}.{name}")
        ids = table.scan(selected_fields=("id",)).to_arrow().column("id").to_pylist()
        out = {"ids": sorted(ids), "snapshots": len(table.metadata.snapshots)}
    else:
        raise SystemExit(f"unknown op {op}")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
