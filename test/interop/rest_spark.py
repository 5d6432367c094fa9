"""Spark's Iceberg REST catalog against Floe's REST endpoint (test/interop/rest-endpoint.interop.ts).

argv[1] is JSON: {"uri", "table", "insert": [ids]}. Inserts rows (id, name) through the REST
catalog, then prints one JSON line with the ids Spark reads back through it.
"""
import json
import os
import sys

from pyspark.sql import SparkSession


def main():
    req = json.loads(sys.argv[1])
    # --- snippet: spark_rest ---
    spark = (
        SparkSession.builder.master("local[1]")
        .config("spark.driver.memory", "768m")
        .config("spark.jars", os.environ["FLOE_INTEROP_JARS"])
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config("spark.sql.catalog.rest", "org.apache.iceberg.spark.SparkCatalog")
        .config("spark.sql.catalog.rest.type", "rest")
        .config("spark.sql.catalog.rest.uri", req["uri"])
        .config("spark.sql.catalog.rest.io-impl", "org.apache.iceberg.aws.s3.S3FileIO")
        .config("spark.sql.catalog.rest.cache-enabled", "false")
        # Only for an S3-compatible server (here s3rver); leave these out on AWS:
        .config("spark.sql.catalog.rest.s3.endpoint", os.environ["AWS_ENDPOINT_URL_S3"])
        .config("spark.sql.catalog.rest.s3.path-style-access", "true")
        .config("spark.sql.catalog.rest.s3.chunked-encoding-enabled", "false")
        .getOrCreate()
    )
    # --- end ---
    spark.sparkContext.setLogLevel("ERROR")
    table = f"rest.{req['table']}"
    values = ", ".join(f"({int(i)}, 'spark{int(i)}')" for i in req["insert"])
    spark.sql(f"INSERT INTO {table} (id, name) VALUES {values}")
    ids = [r.id for r in spark.sql(f"SELECT id FROM {table} ORDER BY id").collect()]
    print(json.dumps({"ids": ids}))
    spark.stop()


if __name__ == "__main__":
    main()
