// The official TypeScript client @modelcontextprotocol/client 2.4.0 over stdio, in `auto` or
// `pin` (2026-07-28) version negotiation, against the real server (negotiation, discover,
// tools/list, beam_version, teardown) and the test host (progress, per-request log level).
//
//   node modern-sdk-client.mjs --mode auto|pin --server PATH --test-host PATH
//
// Prints `PASS <lane>/<check>` or `FAIL <lane>/<check>: reason` per check; exits 1 on any FAIL.

import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import {
  Checks,
  MODERN,
  checkProgress,
  checkTeardown,
  collectStderr,
  expect,
  expectEqual,
  logCall,
  recordWire,
} from './common.mjs';

const { values: args } = parseArgs({
  options: {
    mode: { type: 'string' },
    server: { type: 'string' },
    'test-host': { type: 'string' },
  },
});
expect(['auto', 'pin'].includes(args.mode), '--mode auto|pin is required');
const negotiation = args.mode === 'pin' ? { pin: MODERN } : 'auto';
const REQUEST = { timeout: 10_000 };

function connectTo(command) {
  const transport = new StdioClientTransport({ command, args: [], stderr: 'pipe', env: { PATH: process.env.PATH ?? '' } });
  const stderr = collectStderr(transport);
  const wire = recordWire(transport);
  const client = new Client(
    { name: 'lean-beam-mcp-modern-sdk-lane', version: '0.0.0' },
    { versionNegotiation: { mode: negotiation, probe: { timeoutMs: 10_000 } } },
  );
  const errors = [];
  client.onerror = (error) => errors.push(error);
  return { transport, stderr, wire, client, errors };
}

function checkModernWire(wire) {
  const methods = wire.outbound.filter((m) => m.method).map((m) => m.method);
  expect(!methods.includes('initialize'), `the session process was sent initialize: ${methods.join(', ')}`);
  for (const message of wire.outbound.filter((m) => m.method && m.id !== undefined)) {
    expectEqual(message.params?._meta?.['io.modelcontextprotocol/protocolVersion'], MODERN, `${message.method} _meta protocolVersion`);
  }
  return methods.join(', ');
}

async function realServer() {
  const checks = new Checks(`ts-client-2.4.0/${args.mode}/server`);
  const { transport, stderr, wire, client } = connectTo(args.server);
  if (!(await checks.check('connect', () => client.connect(transport, REQUEST)))) return checks;
  await checks.check('era', () => expectEqual(client.getProtocolEra(), 'modern', 'protocol era'));
  await checks.check('negotiated-version', () =>
    expectEqual(client.getNegotiatedProtocolVersion(), MODERN, 'negotiated protocol version'),
  );
  await checks.check('connect-discover-supported-versions', () =>
    expectEqual(client.getDiscoverResult()?.supportedVersions, [MODERN], 'supportedVersions of the connect-time discover'),
  );
  await checks.check('discover', async () => {
    const result = await client.discover(REQUEST);
    expectEqual(result.supportedVersions, [MODERN], 'server/discover supportedVersions');
    expect(result.capabilities?.tools, 'discover capabilities lack tools');
  });
  await checks.check('tools-list', async () => {
    const { tools } = await client.listTools(undefined, REQUEST);
    const names = tools.map((t) => t.name);
    expect(names.includes('beam_version'), `beam_version missing from ${JSON.stringify(names)}`);
    return names.join(', ');
  });
  await checks.check('beam-version-call', async () => {
    const result = await client.callTool({ name: 'beam_version', arguments: {} }, REQUEST);
    expect(!result.isError, `isError: ${JSON.stringify(result.content)}`);
    expectEqual(result.structuredContent?.mcp_protocol, MODERN, 'structuredContent.mcp_protocol');
    expectEqual(result.content?.[0]?.type, 'text', 'content[0].type');
    expectEqual(JSON.parse(result.content[0].text), result.structuredContent, 'content[0].text as JSON');
    return `${result.structuredContent.name} ${result.structuredContent.version}`;
  });
  await checks.check('modern-envelope-on-every-request', () => checkModernWire(wire));
  await checkTeardown(checks, 'teardown', client, transport, stderr);
  return checks;
}

async function testHost() {
  const checks = new Checks(`ts-client-2.4.0/${args.mode}/test-host`);
  const { transport, stderr, wire, client } = connectTo(args['test-host']);
  const messages = [];
  client.setNotificationHandler('notifications/message', (notification) => {
    messages.push(notification);
  });
  if (!(await checks.check('connect', () => client.connect(transport, REQUEST)))) return checks;
  await checks.check('negotiated-version', () =>
    expectEqual(client.getNegotiatedProtocolVersion(), MODERN, 'negotiated protocol version'),
  );
  await checkProgress(checks, 'progress', wire, (steps, onprogress) =>
    client.callTool({ name: 'progress', arguments: { steps } }, { ...REQUEST, onprogress }),
  );
  const call = (params) => client.callTool(params, REQUEST);
  await checks.check('log-level-warning-delivers-warning', async () => {
    const { result, delivered } = await logCall(client, messages, call, {
      level: 'warning',
      logger: 'lane.warning',
      meta: { 'io.modelcontextprotocol/logLevel': 'warning' },
      expectDelivery: true,
    });
    expectEqual(result.structuredContent?.sent, true, 'tool result `sent`');
    expectEqual(delivered.length, 1, 'notifications/message delivered to the handler');
    expectEqual(delivered[0].params.level, 'warning', 'delivered level');
    expectEqual(delivered[0].params.logger, 'lane.warning', 'delivered logger');
  });
  await checks.check('log-level-warning-drops-info', async () => {
    const { result, delivered } = await logCall(client, messages, call, {
      level: 'info',
      logger: 'lane.info',
      meta: { 'io.modelcontextprotocol/logLevel': 'warning' },
      expectDelivery: false,
    });
    expectEqual(result.structuredContent?.sent, false, 'tool result `sent`');
    expectEqual(delivered.length, 0, 'notifications/message delivered');
  });
  await checks.check('no-log-level-no-message', async () => {
    const { result, delivered } = await logCall(client, messages, call, {
      level: 'emergency',
      logger: 'lane.none',
      expectDelivery: false,
    });
    expectEqual(result.structuredContent?.sent, false, 'tool result `sent`');
    expectEqual(delivered.length, 0, 'notifications/message delivered');
  });
  await checks.check('only-requested-messages-on-wire', () => {
    const onWire = wire.inbound.filter((m) => m.method === 'notifications/message');
    expectEqual(onWire.map((m) => m.params.logger), ['lane.warning'], 'notifications/message loggers on the wire');
  });
  await checks.check('modern-envelope-on-every-request', () => checkModernWire(wire));
  await checkTeardown(checks, 'teardown', client, transport, stderr);
  return checks;
}

const watchdog = setTimeout(() => {
  console.log(`FAIL ts-client-2.4.0/${args.mode}/watchdog: the lane did not finish within 90 s`);
  process.exit(1);
}, 90_000);
watchdog.unref();

let failed = 0;
for (const part of [realServer, testHost]) {
  const checks = await part();
  failed += checks.failed;
}
process.exitCode = failed > 0 ? 1 : 0;
