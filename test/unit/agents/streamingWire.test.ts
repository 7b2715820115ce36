import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { agentModel } from '../../support/loopback/agentModel';
import { startAnthropicServer } from '../../support/loopback/anthropicServer';
import type { LoopbackServer } from '../../support/loopback/core';
import { startOpenAiServer } from '../../support/loopback/openaiServer';
import { startResponsesServer } from '../../support/loopback/responsesServer';

// The streaming wires the agent CLIs speak, checked with the real SDKs' stream parsers.
describe('loopback streaming wires (real SDK stream parsers)', () => {
  const servers: LoopbackServer[] = [];
  after(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });
  const track = async (s: Promise<LoopbackServer>): Promise<LoopbackServer> => {
    const server = await s;
    servers.push(server);
    return server;
  };

  it('Anthropic Messages: text and tool_use blocks, usage in message_start/message_delta', async () => {
    const server = await track(
      startAnthropicServer([
        {
          kind: 'reply',
          toolCalls: [{ name: 'Skill', input: { skill: 'capitals' } }],
          usage: { promptTokens: 50, completionTokens: 7 },
        },
        { kind: 'reply', text: '<answer>PARIS</answer>', usage: { promptTokens: 60, completionTokens: 5 } },
      ]),
    );
    const client = new Anthropic({ apiKey: 'test-not-a-real-key', baseURL: server.url, maxRetries: 0 });
    const first = await client.messages
      .stream({ model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'capital of France?' }] })
      .finalMessage();
    assert.equal(first.stop_reason, 'tool_use');
    assert.deepEqual(
      first.content.map((b) => (b.type === 'tool_use' ? [b.name, b.input] : [b.type])),
      [['Skill', { skill: 'capitals' }]],
    );
    assert.deepEqual([first.usage.input_tokens, first.usage.output_tokens], [50, 7]);
    const second = await client.messages
      .stream({ model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'again' }] })
      .finalMessage();
    assert.deepEqual(
      second.content.map((b) => (b.type === 'text' ? b.text : b.type)),
      ['<answer>PARIS</answer>'],
    );
    assert.equal((server.requests[0].body as { stream: boolean }).stream, true);
  });

  it('OpenAI Responses: function_call items and response.completed usage', async () => {
    const server = await track(
      startResponsesServer([
        { kind: 'reply', toolCalls: [{ name: 'exec_command', input: { cmd: 'cat SKILL.md' } }] },
        { kind: 'reply', text: 'done', usage: { promptTokens: 11, completionTokens: 3 } },
      ]),
    );
    const client = new OpenAI({ apiKey: 'test-not-a-real-key', baseURL: server.url, maxRetries: 0 });
    const first = await client.responses.stream({ model: 'm', input: 'hi' }).finalResponse();
    const call = first.output.find((o) => o.type === 'function_call');
    assert.ok(call && call.type === 'function_call');
    assert.equal(call.name, 'exec_command');
    assert.deepEqual(JSON.parse(call.arguments), { cmd: 'cat SKILL.md' });
    const second = await client.responses.stream({ model: 'm', input: 'again' }).finalResponse();
    assert.equal(second.output_text, 'done');
    assert.deepEqual([second.usage?.input_tokens, second.usage?.output_tokens], [11, 3]);
  });

  it('Chat Completions: streamed deltas, tool calls and the usage chunk', async () => {
    const server = await track(
      startOpenAiServer([
        { kind: 'reply', toolCalls: [{ name: 'skill', input: { skill: 'capitals' } }] },
        { kind: 'reply', text: 'Paris', usage: { promptTokens: 9, completionTokens: 2 } },
      ]),
    );
    const client = new OpenAI({ apiKey: 'test-not-a-real-key', baseURL: server.url, maxRetries: 0 });
    const first = await client.chat.completions
      .stream({ model: 'm', messages: [{ role: 'user', content: 'hi' }] })
      .finalChatCompletion();
    const calls = first.choices[0].message.tool_calls ?? [];
    assert.equal(calls.length, 1);
    assert.equal(calls[0].type === 'function' ? calls[0].function.name : '', 'skill');
    const second = await client.chat.completions
      .stream({
        model: 'm',
        messages: [{ role: 'user', content: 'hi' }],
        stream_options: { include_usage: true },
      })
      .finalChatCompletion();
    assert.equal(second.choices[0].message.content, 'Paris');
    assert.deepEqual([second.usage?.prompt_tokens, second.usage?.completion_tokens], [9, 2]);
  });

  it('the scripted agent model loads a listed skill only when its description matches', async () => {
    const listing = (description: string): string =>
      `The following skills are available for use with the Skill tool:\n\n- capitals: ${description}\n`;
    const handler = agentModel({
      wire: 'anthropic',
      skillName: 'capitals',
      rule: 'RULE-7',
      trigger: /capital/i,
    });
    const req = (system: string, messages: unknown[]) =>
      ({
        index: 0,
        method: 'POST',
        path: '/v1/messages',
        query: {},
        headers: {},
        rawBody: '',
        body: { system, messages },
      }) as never;
    const ask = [{ role: 'user', content: 'What is the capital of France?' }];
    assert.deepEqual(await handler(req(listing('Use for capital cities.'), ask)), {
      kind: 'reply',
      toolCalls: [{ name: 'Skill', input: { skill: 'capitals' } }],
    });
    assert.deepEqual(await handler(req(listing('Use for spreadsheets.'), ask)), {
      kind: 'reply',
      text: '<answer>Paris</answer>',
    });
    assert.deepEqual(await handler(req('RULE-7 applies', ask)), {
      kind: 'reply',
      text: 'The rule applies.\n<answer>PARIS</answer>',
    });
  });
});
