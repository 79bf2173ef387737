// Shared harness for the SDK client lanes (scripts/test-mcp-modern-sdk.sh): PASS/FAIL lines,
// wire recording on a stdio transport, process-teardown checks and the progress/log probes.
// SDK-neutral: each client script passes its own Client/transport objects in.

import { readdirSync, readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';

export const MODERN = '2026-07-28';
export const LEGACY = '2025-11-25';

/** Collects `PASS name` / `FAIL name: reason` lines under a prefix. */
export class Checks {
  constructor(prefix) {
    this.prefix = prefix;
    this.failed = 0;
    this.passed = 0;
  }

  pass(name, detail) {
    this.passed += 1;
    console.log(`PASS ${this.prefix}/${name}${detail ? ` (${detail})` : ''}`);
  }

  fail(name, reason) {
    this.failed += 1;
    console.log(`FAIL ${this.prefix}/${name}: ${String(reason).replace(/\s+/g, ' ')}`);
  }

  /** Runs `body`; it passes unless it throws (its return value, if a string, is the detail). */
  async check(name, body) {
    try {
      const detail = await body();
      this.pass(name, typeof detail === 'string' ? detail : undefined);
      return true;
    } catch (error) {
      this.fail(name, error?.stack && process.env.LANES_VERBOSE ? error.stack : (error?.message ?? error));
      return false;
    }
  }
}

export function expect(condition, message) {
  if (!condition) throw new Error(message);
}

export function expectEqual(actual, expected, what) {
  if (!isDeepStrictEqual(actual, expected)) {
    throw new Error(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
  }
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Records every message the transport sends and receives. The SDKs' `Protocol.connect` chains a
 * pre-existing `transport.onmessage` before its own dispatch, so inbound messages are seen in
 * wire order, before the client's (asynchronous) notification handling.
 */
export function recordWire(transport) {
  const wire = { inbound: [], outbound: [] };
  transport.onmessage = (message) => {
    wire.inbound.push(message);
  };
  const send = transport.send.bind(transport);
  transport.send = (message, ...rest) => {
    wire.outbound.push(message);
    return send(message, ...rest);
  };
  return wire;
}

/** The child process behind an SDK stdio transport (a private field in both SDKs). */
export function childOf(transport) {
  const child = transport._process;
  expect(child && typeof child.pid === 'number', 'the transport has no child process');
  return child;
}

/** Direct children of this Node process still present in /proc (zombies included). */
export function liveChildren() {
  const children = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === process.pid) children.push(`${entry}(${fields[0]})`);
    } catch {
      // The process went away while we looked.
    }
  }
  return children;
}

/** Closes the client and checks the server exited 0 on its own and was reaped. */
export async function checkTeardown(checks, name, client, transport, stderrChunks) {
  await checks.check(name, async () => {
    const child = childOf(transport);
    const { pid } = child;
    const exited = new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
    const started = Date.now();
    await client.close();
    let timer;
    await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(resolve, 5000)))]);
    clearTimeout(timer);
    const took = Date.now() - started;
    expect(child.signalCode === null, `server was killed by ${child.signalCode} (did not exit on end of input)`);
    expectEqual(child.exitCode, 0, 'server exit code');
    let alive = true;
    try {
      process.kill(pid, 0);
    } catch (error) {
      alive = error.code !== 'ESRCH';
    }
    expect(!alive, `server pid ${pid} still exists (not reaped)`);
    // Give libuv a moment to reap any probe sibling, then require that no child is left.
    for (let i = 0; i < 50 && liveChildren().length > 0; i++) await sleep(20);
    expectEqual(liveChildren(), [], 'child processes left behind');
    const stderr = Buffer.concat(stderrChunks).toString('utf8').trim();
    expectEqual(stderr, '', 'server stderr');
    return `pid ${pid} exited 0 in ${took} ms, no child left`;
  });
}

/** Pipes a transport's stderr into a buffer list (the transport must be built with stderr: 'pipe'). */
export function collectStderr(transport) {
  const chunks = [];
  transport.stderr?.on('data', (chunk) => chunks.push(Buffer.from(chunk)));
  return chunks;
}

function strictlyIncreasing(values) {
  return values.every((v, i) => i === 0 || v > values[i - 1]);
}

/**
 * Progress against the test host's `progress {steps}` tool. Two checks:
 * - `<name>-wire`: every attempt's response is preceded by exactly `steps` notifications/progress
 *   carrying the request's progressToken, strictly increasing, none after the response;
 * - `<name>-delivered`: the client's onprogress callback sees >= 1 of them, strictly increasing.
 * Both SDKs dispatch notifications on a microtask but responses synchronously, so progress that
 * shares a pipe read with the response is dropped ("unknown token"): a documented client race
 * (reference §C1). The delivered check therefore repeats the call until a notification gets
 * through, and asserts only on what was received.
 */
export async function checkProgress(checks, name, wire, callWithProgress, { steps = 50, attempts = 40 } = {}) {
  const runs = [];
  let callError;
  try {
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const received = [];
      const from = wire.inbound.length;
      const sentFrom = wire.outbound.length;
      const result = await callWithProgress(steps, (progress) => received.push(progress));
      const request = wire.outbound.slice(sentFrom).find((m) => m.method === 'tools/call');
      runs.push({ received, result, request, inbound: wire.inbound.slice(from) });
      if (received.length > 0) break;
    }
  } catch (error) {
    callError = error;
  }
  await checks.check(`${name}-wire`, async () => {
    if (callError) throw callError;
    for (const run of runs) {
      const token = run.request?.params?._meta?.progressToken;
      expect(token !== undefined, 'the client sent no progressToken');
      const at = run.inbound.findIndex((m) => m.id === run.request.id && ('result' in m || 'error' in m));
      expect(at >= 0, 'no response on the wire');
      const progress = run.inbound.filter((m) => m.method === 'notifications/progress' && m.params?.progressToken === token);
      const before = run.inbound.slice(0, at).filter((m) => m.method === 'notifications/progress' && m.params?.progressToken === token);
      expectEqual(before.length, progress.length, 'progress notifications after the response');
      expectEqual(progress.length, steps, 'progress notifications on the wire');
      const values = progress.map((m) => m.params.progress);
      expect(strictlyIncreasing(values), `progress not strictly increasing: ${JSON.stringify(values)}`);
      expectEqual(run.result?.structuredContent?.sent, steps, 'tool result `sent`');
    }
    return `${runs.length} call(s), ${steps} notifications each`;
  });
  await checks.check(`${name}-delivered`, async () => {
    if (callError) throw callError;
    const last = runs[runs.length - 1];
    const values = last.received.map((p) => p.progress);
    expect(values.length >= 1, `onprogress saw nothing in ${runs.length} calls of ${steps} steps`);
    expect(strictlyIncreasing(values), `received progress not strictly increasing: ${JSON.stringify(values)}`);
    for (const run of runs) {
      expect(strictlyIncreasing(run.received.map((p) => p.progress)), 'a call received non-increasing progress');
    }
    return `${values.length}/${steps} delivered on call ${runs.length}`;
  });
}

/**
 * Calls the test host's `log` tool and reports the notifications/message the client's handler saw
 * for it (the handler runs on a microtask after the response, so it waits for the delivery).
 */
export async function logCall(client, messages, callTool, { level, logger, meta, expectDelivery }) {
  const data = `${logger}-${Math.random().toString(36).slice(2)}`;
  const result = await callTool({ name: 'log', arguments: { level, logger, data }, ...(meta ? { _meta: meta } : {}) });
  const mine = () => messages.filter((m) => m.params?.data === data);
  const deadline = Date.now() + (expectDelivery ? 2000 : 300);
  while (Date.now() < deadline && (expectDelivery ? mine().length === 0 : true)) await sleep(10);
  return { result, delivered: mine() };
}
