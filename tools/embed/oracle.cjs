// oracle.cjs MODEL_DIR: reads a JSON array of sentences on stdin and writes,
// for each, {"ids": [...], "embedding": [...]} (a JSON array) on stdout,
// computed by TensorFlow.js on the graph model in MODEL_DIR (model.json,
// its shards, vocab.json), as @energetic-ai/embeddings does. The Go test
// runtime/discover/embed/oracle_test.go runs it live; its output is never
// committed.
"use strict";
const fs = require("fs");
const core = require("@energetic-ai/core");
const embeddings = require("@energetic-ai/embeddings");

async function main() {
  const dir = process.argv[2];
  if (!dir) throw new Error("usage: oracle.cjs MODEL_DIR < sentences.json");
  const sentences = JSON.parse(fs.readFileSync(0, "utf-8"));
  const model = await embeddings.initModel(async () => ({
    model: await core.loadGraphModel(`file://${dir}/model.json`),
    vocabulary: JSON.parse(fs.readFileSync(`${dir}/vocab.json`, "utf-8")),
  }));
  const out = [];
  for (const s of sentences) {
    out.push({ ids: model.tokenizer.encode(s), embedding: await model.embed(s) });
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e) + "\n");
  process.exit(1);
});
