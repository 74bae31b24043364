// ONNX Runtime (CPU, via onnxruntime-node) peer for bench/encode_bench.cpp:
// times the MiniLM-shaped BERT exported by make_minilm_shaped.py on batches of
// random token ids with every row exactly T tokens long, so the FLOP count is
// the same as on the libtorch side. Prints one JSON object on stdout.
//
//   node tools/reference/bench_onnx.mjs MODEL_DIR [--threads 2] [--warmup 2]
//        [--repeat 5] [--shapes 32x128,64x32] [--opt-levels all,basic]
//        [--allow-spinning 1]
//
// MODEL_DIR holds model.onnx, config.json and check.json. Before timing, the
// session's output for check.json's inputs is compared with the PyTorch
// reference stored there; a max abs difference above 1e-3 is an error (it
// would mean a different network is being measured).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const ort = require('onnxruntime-node');

function fail(message) {
  process.stderr.write(`bench_onnx: error: ${message}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const a = { modelDir: null, threads: 2, warmup: 2, repeat: 5, shapes: '32x128,64x32',
              optLevels: 'all,basic', seed: 1, allowSpinning: '1' };
  const positive = (flag, v) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) fail(`${flag} needs a positive integer, got '${v}'`);
    return n;
  };
  for (let i = 0; i < argv.length; ++i) {
    const s = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) fail(`option ${s} needs a value`);
      return argv[++i];
    };
    if (s === '--threads') a.threads = positive(s, value());
    else if (s === '--warmup') a.warmup = positive(s, value());
    else if (s === '--repeat') a.repeat = positive(s, value());
    else if (s === '--seed') a.seed = positive(s, value());
    else if (s === '--shapes') a.shapes = value();
    else if (s === '--opt-levels') a.optLevels = value();
    else if (s === '--allow-spinning') {
      a.allowSpinning = value();
      if (a.allowSpinning !== '0' && a.allowSpinning !== '1') fail('--allow-spinning takes 0 or 1');
    }
    else if (s.startsWith('-'))
      fail(`unknown option '${s}' (valid: --threads, --warmup, --repeat, --seed, --shapes, --opt-levels, --allow-spinning)`);
    else a.modelDir = s;
  }
  if (!a.modelDir) fail('usage: bench_onnx.mjs MODEL_DIR [options]');
  a.shapes = a.shapes.split(',').map((spec) => {
    const m = /^(\d+)x(\d+)$/.exec(spec);
    if (!m) fail(`--shapes: '${spec}' is not BxT (e.g. 32x128)`);
    return { batch: Number(m[1]), tokens: Number(m[2]) };
  });
  const levels = ['disabled', 'basic', 'extended', 'all'];
  a.optLevels = a.optLevels.split(',');
  for (const l of a.optLevels)
    if (!levels.includes(l)) fail(`--opt-levels: unknown level '${l}' (valid: ${levels.join(', ')})`);
  return a;
}

function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    fail(`${file}: ${e.message}`);
  }
}

// Matmul FLOPs of one forward pass (multiply-add = 2), the same formula as
// bert_flops() in bench/encode_bench.cpp: the four attention projections and
// the two FFN matmuls per token, plus QK^T and AV (4*T^2*H per sequence).
function bertFlops(c, batch, tokens) {
  const h = c.hidden_size, inter = c.intermediate_size, layers = c.num_hidden_layers;
  const perTokenLayer = 2 * (4 * h * h + 2 * h * inter);
  return layers * (batch * tokens * perTokenLayer + batch * 4 * tokens * tokens * h);
}

// Deterministic ids (mulberry32) in [1000, vocab): ordinary word pieces.
function randomIds(n, vocab, seed) {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const ids = new BigInt64Array(n);
  for (let i = 0; i < n; ++i) ids[i] = BigInt(1000 + Math.floor(next() * (vocab - 1000)));
  return ids;
}

function feeds(ids, mask, batch, tokens) {
  return {
    input_ids: new ort.Tensor('int64', ids, [batch, tokens]),
    attention_mask: new ort.Tensor('int64', mask, [batch, tokens]),
  };
}

async function checkAgainstReference(session, check, tolerance) {
  const [b, t, h] = check.shape;
  const out = await session.run(feeds(BigInt64Array.from(check.input_ids.flat(), BigInt),
                                      BigInt64Array.from(check.attention_mask.flat(), BigInt), b, t));
  const got = out.last_hidden_state;
  if (got.dims.join('x') !== [b, t, h].join('x'))
    fail(`check: output shape ${got.dims.join('x')}, expected ${[b, t, h].join('x')}`);
  let maxDiff = 0;
  for (let i = 0; i < got.data.length; ++i)
    maxDiff = Math.max(maxDiff, Math.abs(got.data[i] - check.last_hidden_state[i]));
  if (!(maxDiff <= tolerance))
    fail(`check: max |onnxruntime - pytorch| = ${maxDiff} > ${tolerance}; not the same network`);
  return maxDiff;
}

function median(xs) {
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)];
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const modelPath = path.join(a.modelDir, 'model.onnx');
  const config = readJson(path.join(a.modelDir, 'config.json'));
  const check = readJson(path.join(a.modelDir, 'check.json'));
  const result = {
    benchmark: 'onnxruntime_encode',
    argv: process.argv.slice(1),
    runtime: { onnxruntime_node: require('onnxruntime-node/package.json').version,
               node: process.version },
    cpu_model: os.cpus()[0]?.model ?? 'unknown',
    nproc: os.availableParallelism ? os.availableParallelism() : os.cpus().length,
    date: new Date().toISOString(),
    loadavg_start: os.loadavg(),
    model: modelPath,
    threads: a.threads, warmup: a.warmup, repeat: a.repeat,
    measurements: [],
  };
  for (const level of a.optLevels) {
    const session = await ort.InferenceSession.create(modelPath, {
      executionProviders: ['cpu'], intraOpNumThreads: a.threads, interOpNumThreads: 1,
      executionMode: 'sequential', graphOptimizationLevel: level,
      // ORT's pool spins between ops by default (like OMP_WAIT_POLICY=active);
      // spinning inflates CPU time and, on shared cores, steals from the work.
      extra: { session: { intra_op: { allow_spinning: a.allowSpinning } } },
    });
    const maxDiff = await checkAgainstReference(session, check, 1e-3);
    for (const { batch, tokens } of a.shapes) {
      if (tokens > config.max_position_embeddings)
        fail(`--shapes: ${tokens} tokens exceed max_position_embeddings=${config.max_position_embeddings}`);
      const ids = randomIds(batch * tokens, config.vocab_size, a.seed);
      const mask = new BigInt64Array(batch * tokens).fill(1n);
      const input = feeds(ids, mask, batch, tokens);
      for (let w = 0; w < a.warmup; ++w) await session.run(input);
      const seconds = [];
      const cpu0 = process.cpuUsage();
      for (let r = 0; r < a.repeat; ++r) {
        const t0 = process.hrtime.bigint();
        const out = await session.run(input);
        seconds.push(Number(process.hrtime.bigint() - t0) / 1e9);
        if (out.last_hidden_state.dims[2] !== config.hidden_size) fail('unexpected output width');
      }
      const cpu = process.cpuUsage(cpu0);
      // ~threads when the run had the cores to itself (as in encode_bench).
      const cpuSeconds = (cpu.user + cpu.system) / 1e6;
      const cpuPerWall = cpuSeconds / seconds.reduce((x, y) => x + y, 0);
      const s = median(seconds);
      const flops = bertFlops(config, batch, tokens);
      result.measurements.push({
        model: 'minilm-shaped', runtime: 'onnxruntime', graph_optimization: level,
        what: 'forward', batch, tokens, flops, seconds_median: s, seconds_all: seconds,
        cpu_per_wall: cpuPerWall, sentences_per_s: batch / s, gflops_per_s: flops / s / 1e9,
        gflops_per_cpu_s: (flops * a.repeat) / cpuSeconds / 1e9, allow_spinning: a.allowSpinning,
        check_max_abs_diff: maxDiff,
      });
      process.stderr.write(`onnxruntime ${level} ${batch}x${tokens}: ${(batch / s).toFixed(1)} sentences/s, ` +
                           `${(flops / s / 1e9).toFixed(1)} GFLOP/s\n`);
    }
    await session.release();
  }
  result.loadavg_end = os.loadavg();
  process.stdout.write(JSON.stringify(result, null, 2) + '\n');
}

main().catch((e) => fail(e.stack || String(e)));
