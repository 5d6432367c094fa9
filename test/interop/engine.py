"""
The real engines of the interop suite, driven from Node over stdin/stdout: one JSON request per
line in, one JSON reply per line out (prefixed with REPLY so engine logs cannot be mistaken for
one). Spark starts on its first use, once per process (one SparkSession per test file).

The blocks between `# --- snippet: NAME ---` and `# --- end ---` are the configuration a user
writes; docs/engines.md shows them verbatim (test/interop/snippets.test.ts checks that).
"""
import datetime
import decimal
import json
import os
import sys
import traceback
import uuid

REPLY = "@@floe-engine "
_spark = None
_catalog = None
_duck = None


def conf():
    return {
        "s3": os.environ["AWS_ENDPOINT_URL_S3"],
        "dynamodb": os.environ["AWS_ENDPOINT_URL_DYNAMODB"],
        "catalog_table": os.environ["FLOE_INTEROP_CATALOG_TABLE"],
        "warehouse": os.environ["FLOE_INTEROP_WAREHOUSE"],
        "jars": os.environ["FLOE_INTEROP_JARS"],
    }


def spark():
    global _spark
    if _spark is None:
        c = conf()
        s3_endpoint, catalog_table, warehouse, jars = c["s3"], c["catalog_table"], c["warehouse"], c["jars"]
        # --- snippet: spark ---
        # Credentials and region come from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
        # AWS_REGION), DynamoDB's endpoint from AWS_ENDPOINT_URL_DYNAMODB when it is not AWS's.
        from pyspark.sql import SparkSession

        spark = (
            SparkSession.builder.master("local[2]")
            .config("spark.driver.memory", "1g")
            .config("spark.jars", jars)  # iceberg-spark-runtime-4.1_2.13-1.12.0.jar,iceberg-aws-bundle-1.12.0.jar
            .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
            .config("spark.sql.catalog.floe", "org.apache.iceberg.spark.SparkCatalog")
            .config("spark.sql.catalog.floe.catalog-impl", "org.apache.iceberg.aws.dynamodb.DynamoDbCatalog")
            .config("spark.sql.catalog.floe.dynamodb.table-name", catalog_table)  # FLOE_CATALOG_TABLE
            .config("spark.sql.catalog.floe.warehouse", warehouse)  # FLOE_WAREHOUSE
            .config("spark.sql.catalog.floe.io-impl", "org.apache.iceberg.aws.s3.S3FileIO")
            # Floe commits from outside this session: don't serve a cached, older table version.
            .config("spark.sql.catalog.floe.cache-enabled", "false")
            # Only for an S3-compatible server (here s3rver, which stores aws-chunked bodies as is);
            # leave these out on AWS:
            .config("spark.sql.catalog.floe.s3.endpoint", s3_endpoint)
            .config("spark.sql.catalog.floe.s3.path-style-access", "true")
            .config("spark.sql.catalog.floe.s3.chunked-encoding-enabled", "false")
            .getOrCreate()
        )
        # --- end ---
        spark.sparkContext.setLogLevel("ERROR")
        spark.conf.set("spark.sql.shuffle.partitions", "2")
        _spark = spark
    return _spark


def catalog():
    global _catalog
    if _catalog is None:
        c = conf()
        s3_endpoint, catalog_table, warehouse = c["s3"], c["catalog_table"], c["warehouse"]
        # --- snippet: pyiceberg ---
        # Credentials come from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), DynamoDB's
        # endpoint from AWS_ENDPOINT_URL_DYNAMODB when it is not AWS's. boto3 ignores AWS_REGION: name it.
        from pyiceberg.catalog import load_catalog

        catalog = load_catalog(
            "floe",
            **{
                "type": "dynamodb",
                "client.region": "us-east-1",
                "table-name": catalog_table,  # FLOE_CATALOG_TABLE
                "warehouse": warehouse,  # FLOE_WAREHOUSE
                "py-io-impl": "pyiceberg.io.fsspec.FsspecFileIO",  # s3fs
                # Only for an S3-compatible server (here s3rver); leave it out on AWS:
                "s3.endpoint": s3_endpoint,
            },
        )
        # --- end ---
        _catalog = catalog
    return _catalog


def duck():
    global _duck
    if _duck is None:
        c = conf()
        s3_host = c["s3"].split("://", 1)[1].rstrip("/")
        key, secret = os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"]
        # --- snippet: duckdb ---
        # pip install duckdb==1.4.4 duckdb-ext==0.1.2 duckdb-ext-iceberg==1.4.4.20260205 \
        #   duckdb-ext-httpfs==1.4.4.20260205 duckdb-ext-avro==1.4.4.20260205
        import duckdb
        import duckdb_ext

        con = duckdb_ext.init(duckdb.connect())  # extensions from the pip packages, none downloaded
        con.execute("LOAD httpfs; LOAD avro; LOAD iceberg;")
        con.execute(
            "CREATE SECRET floe (TYPE s3, KEY_ID ?, SECRET ?, REGION 'us-east-1',"
            # Only for an S3-compatible server (here s3rver); leave these out on AWS:
            " ENDPOINT ?, URL_STYLE 'path', USE_SSL false)",
            [key, secret, s3_host],
        )
        # Read a table by its current metadata file (the catalog's p.metadata_location):
        #   SELECT * FROM iceberg_scan('s3://bucket/warehouse/db.db/events/metadata/00003-….metadata.json')
        # --- end ---
        _duck = con
    return _duck


def plain(v):
    """A JSON-safe value that keeps the type visible: decimals and big integers exact as text."""
    if v is None or isinstance(v, (bool, str, float)):
        return v
    if isinstance(v, int):
        return v if abs(v) < 2**53 else {"$int": str(v)}
    if isinstance(v, decimal.Decimal):
        return {"$decimal": str(v)}
    if isinstance(v, datetime.datetime):
        return {"$timestamp": v.isoformat()}
    if isinstance(v, datetime.date):
        return {"$date": v.isoformat()}
    if isinstance(v, datetime.time):
        return {"$time": v.isoformat()}
    if isinstance(v, uuid.UUID):
        return {"$uuid": str(v)}
    if isinstance(v, (bytes, bytearray, memoryview)):
        return {"$bytes": bytes(v).hex()}
    if hasattr(v, "asDict"):
        return {k: plain(x) for k, x in v.asDict().items()}
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        # pyarrow returns maps as lists of (key, value) tuples
        return [plain(x) for x in v]
    return {"$repr": repr(v)}


def spark_sql(req):
    if req.get("explain"):
        return {"plan": spark().sql("EXPLAIN EXTENDED " + req["sql"]).collect()[0][0]}
    df = spark().sql(req["sql"])
    rows = df.collect()
    return {"schema": [[f.name, f.dataType.simpleString()] for f in df.schema.fields], "rows": [plain(r) for r in rows]}


def pyiceberg_scan(req):
    from pyiceberg.expressions import AlwaysTrue

    table = catalog().load_table(req["table"])
    row_filter = req.get("row_filter") or AlwaysTrue()
    scan = table.scan(row_filter=row_filter, selected_fields=tuple(req.get("columns") or ["*"]))
    files = len(list(scan.plan_files()))
    arrow = scan.to_arrow()
    schema = [[f.name, str(f.type)] for f in arrow.schema]
    import pyarrow as pa

    # Python's datetime stops at microseconds: nanosecond timestamps come back as epoch nanoseconds.
    for i, f in enumerate(arrow.schema):
        if pa.types.is_timestamp(f.type) and f.type.unit == "ns":
            arrow = arrow.set_column(i, f.name, arrow.column(i).cast(pa.int64()))
    return {
        "files": files,
        "schema": schema,
        "rows": [plain(r) for r in arrow.to_pylist()],
        "iceberg_schema": json.loads(table.schema().model_dump_json()),
    }


def pyiceberg_metadata(req):
    table = catalog().load_table(req["table"])
    return {"metadata_location": table.metadata_location, "metadata": json.loads(table.metadata.model_dump_json())}


def duckdb_sql(req):
    con = duck()
    cur = con.execute(req["sql"], req.get("params") or [])
    names = [d[0] for d in cur.description]
    types = [str(d[1]) for d in cur.description]
    return {"schema": [list(t) for t in zip(names, types)], "rows": [dict(zip(names, [plain(x) for x in r])) for r in cur.fetchall()]}


def parquet_schema(req):
    """How pyarrow reads a Parquet file's footer: logical types per column."""
    import pyarrow.parquet as pq
    import s3fs

    fs = s3fs.S3FileSystem(endpoint_url=conf()["s3"])
    with fs.open(req["path"].replace("s3://", ""), "rb") as f:
        meta = pq.ParquetFile(f)
        cols = meta.schema
        return {
            "columns": [[cols.column(i).path, str(cols.column(i).logical_type), str(cols.column(i).physical_type)] for i in range(len(cols))],
            "arrow": [[f.name, str(f.type)] for f in meta.schema_arrow],
            "rows": [plain(r) for r in meta.read().to_pylist()],
        }


OPS = {
    "spark": spark_sql,
    "pyiceberg_scan": pyiceberg_scan,
    "pyiceberg_metadata": pyiceberg_metadata,
    "duckdb": duckdb_sql,
    "parquet_schema": parquet_schema,
}


def main():
    out = sys.stdout
    sys.stdout = sys.stderr  # engine chatter goes to stderr; replies alone to the real stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            reply = {"id": req["id"], "ok": True, **OPS[req["op"]](req)}
        except Exception as e:  # reported to the test, which fails with the message
            reply = {"id": req["id"], "ok": False, "error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()[-4000:]}
        out.write(REPLY + json.dumps(reply) + "\n")
        out.flush()
    if _spark is not None:
        _spark.stop()


if __name__ == "__main__":
    main()
