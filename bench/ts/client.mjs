// The TypeScript SDK client (@modelcontextprotocol/client, pinned by bench/run.py) under the
// bench tests: seq, conc, mrtr, connect. Modern era (versionNegotiation pinned to 2026-07-28,
// so the connect is one server/discover on the same connection, like the other clients).
//
//   node client.mjs TEST [--duration S] [--warmup N] [--max-calls N] [--inflight N]
//        [--iterations N] (--url URL | -- SERVER [ARGS...])
// Prints one JSON line on stdout. MCP_BENCH_NODE_MODULES is the node_modules folder holding
// the installed package (outside the repository).
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(path.join(process.env.MCP_BENCH_NODE_MODULES ?? '.', 'bench.cjs'));
const { Client, StreamableHTTPClientTransport } = require('@modelcontextprotocol/client');
const { StdioClientTransport } = require('@modelcontextprotocol/client/stdio');

function parseArgs(argv) {
  const a = { test: argv[0], duration: 2, warmup: 500, maxCalls: 200000, inflight: 1, iterations: 50, url: null, cmd: null };
  for (let i = 1; i < argv.length; i++) {
    const f = argv[i];
    if (f === '--') { a.cmd = argv.slice(i + 1); break; }
    const v = argv[++i];
    if (f === '--duration') a.duration = Number(v);
    else if (f === '--warmup') a.warmup = Number(v);
    else if (f === '--max-calls') a.maxCalls = Number(v);
    else if (f === '--inflight') a.inflight = Number(v);
    else if (f === '--iterations') a.iterations = Number(v);
    else if (f === '--calls') a.calls = Number(v);
    else if (f === '--url') a.url = v;
    else throw new Error(`unknown option ${f}`);
  }
  if (!a.url && !(a.cmd && a.cmd.length)) throw new Error('no server: --url URL or -- SERVER ARGS...');
  return a;
}

const args = parseArgs(process.argv.slice(2));
const nowNs = () => process.hrtime.bigint();
const cpuUs = () => { const u = process.cpuUsage(); return u.user + u.system; };

async function connected(elicitation) {
  const client = new Client(
    { name: 'ts-bench', version: '0.1.0' },
    {
      capabilities: elicitation ? { elicitation: { form: {} } } : {},
      versionNegotiation: { mode: { pin: '2026-07-28' } },
    },
  );
  if (elicitation) {
    client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name: 'bench' } }));
  }
  const transport = args.url
    ? new StreamableHTTPClientTransport(new URL(args.url))
    : new StdioClientTransport({ command: args.cmd[0], args: args.cmd.slice(1), stderr: 'ignore' });
  await client.connect(transport);
  return client;
}

const call = (client, name) => client.callTool({ name, arguments: { text: 'hi' } });

function series(prefix, lat, calls, seconds) {
  lat.sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  const pct = (p) => (lat.length ? Number(lat[Math.min(lat.length - 1, Math.round((p / 100) * (lat.length - 1)))]) / 1000 : 0);
  const mean = lat.length ? Number(lat.reduce((s, x) => s + x, 0n)) / lat.length / 1000 : 0;
  return {
    [`${prefix}calls`]: calls, [`${prefix}seconds`]: seconds, [`${prefix}per_sec`]: seconds > 0 ? calls / seconds : 0,
    [`${prefix}p50_us`]: pct(50), [`${prefix}p99_us`]: pct(99), [`${prefix}mean_us`]: mean,
  };
}

async function timed(client, name, seconds) {
  const lat = [];
  const start = nowNs();
  const deadline = start + BigInt(Math.round(seconds * 1e9));
  let t = start;
  while (lat.length < args.maxCalls && t < deadline) {
    await call(client, name);
    const t2 = nowNs();
    lat.push(t2 - t);
    t = t2;
  }
  return { lat, calls: lat.length, seconds: Number(t - start) / 1e9 };
}

async function main() {
  let out = {};
  if (args.test === 'seq') {
    const client = await connected(false);
    for (let i = 0; i < args.warmup; i++) await call(client, 'echo');
    const cpu0 = cpuUs();
    const s = await timed(client, 'echo', args.duration);
    const cpu = cpuUs() - cpu0;
    out = { ...series('', s.lat, s.calls, s.seconds), cpu_us_per_call: cpu / Math.max(1, s.calls), rss_kb: Math.round(process.memoryUsage().rss / 1024) };
    await client.close();
  } else if (args.test === 'conc') {
    const client = await connected(false);
    for (let i = 0; i < args.warmup; i++) await call(client, 'echo');
    const start = nowNs();
    const deadline = start + BigInt(Math.round(args.duration * 1e9));
    const lats = await Promise.all(Array.from({ length: args.inflight }, async () => {
      const lat = [];
      let t = nowNs();
      while (t < deadline) {
        await call(client, 'echo');
        const t2 = nowNs();
        lat.push(t2 - t);
        t = t2;
      }
      return lat;
    }));
    const all = lats.flat();
    out = { inflight: args.inflight, ...series('', all, all.length, Number(nowNs() - start) / 1e9) };
    await client.close();
  } else if (args.test === 'mrtr') {
    const client = await connected(true);
    for (let i = 0; i < args.warmup; i++) { await call(client, 'echo'); await call(client, 'elicit_once'); }
    const p = await timed(client, 'echo', args.duration / 2);
    const m = await timed(client, 'elicit_once', args.duration / 2);
    out = { ...series('plain_', p.lat, p.calls, p.seconds), ...series('mrtr_', m.lat, m.calls, m.seconds) };
    await client.close();
  } else if (args.test === 'connect') {
    const conn = [], first = [], close = [];
    const deadline = nowNs() + BigInt(Math.round(args.duration * 1e9));
    while (conn.length < args.iterations && nowNs() < deadline) {
      const t0 = nowNs();
      const client = await connected(false);
      const t1 = nowNs();
      await call(client, 'echo'); // spawn to first result
      const tf = nowNs();
      await client.close();
      const t2 = nowNs();
      conn.push(t1 - t0);
      first.push(tf - t0);
      close.push(t2 - tf);
    }
    const c = series('connect_', conn, conn.length, 0), d = series('close_', close, close.length, 0);
    const f = series('first_', first, first.length, 0);
    out = { iterations: conn.length, connect_p50_us: c.connect_p50_us, connect_p99_us: c.connect_p99_us, first_p50_us: f.first_p50_us, first_p99_us: f.first_p99_us, close_p50_us: d.close_p50_us, close_p99_us: d.close_p99_us };
  } else {
    throw new Error(`unknown test ${args.test}`);
  }
  process.stdout.write(JSON.stringify({ runner: 'ts', test: args.test, ...out }) + '\n');
  process.exit(0);
}

main().catch((e) => { process.stderr.write(`bench: ${e?.stack ?? e}\n`); process.exit(3); });
