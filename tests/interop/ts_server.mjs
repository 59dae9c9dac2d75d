// Interop server on the official TypeScript SDK (@modelcontextprotocol/server 2.4.0 + zod 4;
// @modelcontextprotocol/node 2.1.2 for HTTP), our own script.
//
//   node ts_server.mjs               stdio (the first message pins the era; both are served)
//   node ts_server.mjs http PORT     Streamable HTTP on http://127.0.0.1:PORT/mcp (any path)
//
// Handlers are written once with `inputRequired(...)`: 2026-07-28 clients get input_required
// results (requestState passed through unsealed); on 2025-era connections the SDK's legacy shim
// turns the same embedded requests into real server->client requests and re-enters the handler.
//
// Tools: add, echo (plain); protocol (the revision a call is served under); greet (one
// elicitation); wizard (three rounds, the state carried in requestState); confirm_and_summarize
// (an elicitation and a sampling request in one round); list_roots (roots/list); state_only (two
// rounds with only requestState). Prompt `haiku` and resource template `vault://{name}` elicit
// first; prompt `plain`; resources `info://server` and `item://1..23`, listed in pages of 10.
import http from 'node:http';
import {
  McpServer,
  ResourceTemplate,
  acceptedContent,
  createMcpHandler,
  inputRequired,
  inputResponse
} from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { z } from 'zod';

const PAGE_SIZE = 10;
const text = (t) => ({ content: [{ type: 'text', text: t }] });

function parseState(raw) {
  if (typeof raw !== 'string') return {};
  try {
    return JSON.parse(raw);
  } catch {
    return {};
  }
}

function makeServer() {
  const server = new McpServer(
    { name: 'ts-interop-server', version: '2.4.0-interop' },
    { instructions: 'mcp_client interop server (TypeScript SDK)' }
  );

  server.registerTool(
    'add',
    { description: 'Add two numbers', inputSchema: z.object({ a: z.number(), b: z.number() }) },
    async ({ a, b }) => text(String(a + b))
  );

  server.registerTool('echo', { inputSchema: z.object({ text: z.string() }) }, async (args) => text(args.text));

  // The schema shapes zod emits (for the export corpus): enums, optionals, defaults, nested
  // objects and arrays, bounds, descriptions, a title and annotations.
  server.registerTool(
    'search_issues',
    {
      title: 'Search issues',
      description: 'Searches the issue tracker',
      annotations: { readOnlyHint: true, openWorldHint: false },
      inputSchema: z.object({
        query: z.string().min(1).describe('Words to look for'),
        state: z.enum(['open', 'closed', 'all']).default('open'),
        labels: z.array(z.string()).optional(),
        page: z.object({ size: z.number().int().min(1).max(100), after: z.string().optional() }).optional(),
      }),
    },
    async ({ query }) => text(`no issues match ${query}`)
  );

  // The protocol revision this server instance serves the call under (envelope on 2026-07-28,
  // the negotiated version on a 2025-era connection).
  server.registerTool('protocol', { inputSchema: z.object({}) }, async (_args, ctx) => {
    const modern = ctx.mcpReq.envelope?.['io.modelcontextprotocol/protocolVersion'];
    return text(modern ? `modern ${modern}` : `legacy ${server.server._negotiatedProtocolVersion}`);
  });

  const nameSchema = z.object({ name: z.string() });
  server.registerTool('greet', { description: 'Greets after eliciting a name', inputSchema: z.object({}) }, async (_args, ctx) => {
    const answer = acceptedContent(ctx.mcpReq.inputResponses, 'ask_name', nameSchema);
    if (!answer) {
      return inputRequired({
        inputRequests: { ask_name: inputRequired.elicit({ message: 'What is your name?', requestedSchema: nameSchema }) },
        requestState: 'greet:round-1'
      });
    }
    return text(`Hello, ${answer.name}!`);
  });

  // Three rounds; each answer is kept in requestState because a retry carries only the
  // current round's responses.
  const colourSchema = z.object({ colour: z.string() });
  const sizeSchema = z.object({ size: z.string() });
  server.registerTool('wizard', { description: 'Three rounds: name, colour, size', inputSchema: z.object({}) }, async (_args, ctx) => {
    const state = parseState(ctx.mcpReq.requestState());
    const responses = ctx.mcpReq.inputResponses;
    const name = state.name ?? acceptedContent(responses, 'name', nameSchema)?.name;
    if (!name) {
      return inputRequired({
        inputRequests: { name: inputRequired.elicit({ message: 'What is your name?', requestedSchema: nameSchema }) },
        requestState: JSON.stringify({ step: 1 })
      });
    }
    const colour = state.colour ?? acceptedContent(responses, 'colour', colourSchema)?.colour;
    if (!colour) {
      return inputRequired({
        inputRequests: { colour: inputRequired.elicit({ message: `Which colour, ${name}?`, requestedSchema: colourSchema }) },
        requestState: JSON.stringify({ step: 2, name })
      });
    }
    const size = acceptedContent(responses, 'size', sizeSchema)?.size;
    if (!size) {
      return inputRequired({
        inputRequests: {
          size: inputRequired.elicit({ message: `Which size for the ${colour} shirt?`, requestedSchema: sizeSchema })
        },
        requestState: JSON.stringify({ step: 3, name, colour })
      });
    }
    return text(`${name} ordered a ${size} ${colour} shirt`);
  });

  const confirmSchema = z.object({ confirmed: z.boolean() });
  server.registerTool(
    'confirm_and_summarize',
    { description: 'An elicitation and a sampling request in one round', inputSchema: z.object({}) },
    async (_args, ctx) => {
      const responses = ctx.mcpReq.inputResponses;
      const ok = acceptedContent(responses, 'confirm', confirmSchema);
      const sample = inputResponse(responses, 'summary');
      if (!ok || sample.kind !== 'sampling') {
        return inputRequired({
          inputRequests: {
            confirm: inputRequired.elicit({ message: 'Proceed with the summary?', requestedSchema: confirmSchema }),
            summary: inputRequired.createMessage({
              messages: [{ role: 'user', content: { type: 'text', text: 'Summarize: the quick brown fox' } }],
              maxTokens: 50
            })
          },
          requestState: 'confirm_and_summarize:round-1'
        });
      }
      const content = sample.result.content;
      const summary = Array.isArray(content) ? content.map((c) => c.text).join(' ') : content.text;
      return text(`confirmed=${ok.confirmed}; summary=${summary}; model=${sample.result.model}`);
    }
  );

  server.registerTool('list_roots', { description: 'Asks for the roots', inputSchema: z.object({}) }, async (_args, ctx) => {
    const answer = inputResponse(ctx.mcpReq.inputResponses, 'roots');
    if (answer.kind !== 'roots') {
      return inputRequired({ inputRequests: { roots: inputRequired.listRoots() } });
    }
    return text('roots: ' + answer.roots.map((r) => `${r.name ?? '-'}=${r.uri}`).join(', '));
  });

  server.registerTool(
    'state_only',
    { description: 'Two rounds carrying only requestState', inputSchema: z.object({ label: z.string() }) },
    async ({ label }, ctx) => {
      const state = ctx.mcpReq.requestState();
      if (state === undefined) return inputRequired({ requestState: `${label}:step-1` });
      if (state === `${label}:step-1`) return inputRequired({ requestState: `${label}:step-2` });
      if (state === `${label}:step-2`) return text(`${label}: done after 2 state-only rounds`);
      return text(`${label}: unexpected state ${JSON.stringify(state)}`);
    }
  );

  const styleSchema = z.object({ style: z.string() });
  server.registerPrompt(
    'haiku',
    { description: 'Asks for a style first', argsSchema: z.object({ topic: z.string() }) },
    async ({ topic }, ctx) => {
      const answer = acceptedContent(ctx.mcpReq.inputResponses, 'style', styleSchema);
      if (!answer || ctx.mcpReq.requestState() !== `haiku:${topic}`) {
        return inputRequired({
          inputRequests: {
            style: inputRequired.elicit({ message: `Which style of haiku about ${topic}?`, requestedSchema: styleSchema })
          },
          requestState: `haiku:${topic}`
        });
      }
      return {
        messages: [{ role: 'user', content: { type: 'text', text: `Write a ${answer.style} haiku about ${topic}.` } }]
      };
    }
  );

  server.registerPrompt('plain', { argsSchema: z.object({ subject: z.string() }) }, async ({ subject }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `Tell me about ${subject}.` } }]
  }));

  server.registerResource('info', 'info://server', { mimeType: 'text/plain' }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'ts-interop-server info' }]
  }));

  // Twenty-three more resources, listed in pages of ten (McpServer lists everything in one page,
  // so resources/list is replaced by a paginating handler; the cursor is an opaque offset).
  const listed = [{ uri: 'info://server', name: 'info', mimeType: 'text/plain' }];
  for (let i = 1; i <= 23; i++) {
    const uri = `item://${i}`;
    server.registerResource(`item-${i}`, uri, { mimeType: 'text/plain' }, async () => ({
      contents: [{ uri, mimeType: 'text/plain', text: `item ${i}` }]
    }));
    listed.push({ uri, name: `item-${i}`, mimeType: 'text/plain' });
  }
  server.server.setRequestHandler('resources/list', async (request) => {
    const start = request.params?.cursor ? Number(Buffer.from(request.params.cursor, 'base64url').toString()) : 0;
    const page = listed.slice(start, start + PAGE_SIZE);
    const next = start + PAGE_SIZE < listed.length ? Buffer.from(String(start + PAGE_SIZE)).toString('base64url') : undefined;
    return next ? { resources: page, nextCursor: next } : { resources: page };
  });

  const phraseSchema = z.object({ passphrase: z.string() });
  server.registerResource(
    'vault',
    new ResourceTemplate('vault://{name}', { list: undefined }),
    { mimeType: 'text/plain' },
    async (uri, { name }, ctx) => {
      const answer = acceptedContent(ctx.mcpReq.inputResponses, 'passphrase', phraseSchema);
      if (!answer || ctx.mcpReq.requestState() !== `vault:${name}`) {
        return inputRequired({
          inputRequests: {
            passphrase: inputRequired.elicit({ message: `Passphrase for ${name}?`, requestedSchema: phraseSchema })
          },
          requestState: `vault:${name}`
        });
      }
      return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: `vault ${name} opened with ${answer.passphrase}` }] };
    }
  );

  return server;
}

if (process.argv[2] === 'http') {
  const port = Number(process.argv[3]);
  const httpServer = http.createServer(toNodeHandler(createMcpHandler(makeServer)));
  httpServer.listen(port, '127.0.0.1');
  const stop = () => {
    httpServer.closeAllConnections();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
} else {
  serveStdio(makeServer);
}
