/**
 * Converts SWE-agent trajectories (`.traj`, see test/fixtures/swe-agent/README.md) into OpenAI Chat
 * messages: `tool_call_ids` lists become `tool_call_id` strings, and the SWE-agent
 * bookkeeping fields (agent, thought, action, message_type, is_demo) are dropped.
 */

interface TrajectoryMessage {
  role: string;
  content: string | { type: string; text: string }[];
  tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
  tool_call_ids?: string[];
}

/** Where the vendored transcripts live, relative to the repository root. */
export const SWE_AGENT_DIR = 'test/fixtures/swe-agent';

/** The transcripts, by fixture name. */
export const SWE_AGENT_TRAJECTORIES: Readonly<Record<string, string>> = {
  marshmallow: 'marshmallow-1867__function_calling_replace_from_source.traj',
  pydicom: 'gpt4__pydicom-1458.traj',
  ctf: 'ctf_i_got_id_demo.traj',
};

/** One trajectory's history as Chat Completions messages. A tool message answering several calls is split. */
export function convertTrajectory(trajectory: { history: TrajectoryMessage[] }): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const message of trajectory.history) {
    const content = Array.isArray(message.content)
      ? message.content.map((part) => ({ type: 'text', text: part.text }))
      : message.content;
    if (message.role === 'tool') {
      const ids = message.tool_call_ids ?? [];
      if (ids.length === 0) throw new Error('a tool message without tool_call_ids');
      for (const id of ids) out.push({ role: 'tool', tool_call_id: id, content });
      continue;
    }
    const converted: Record<string, unknown> = { role: message.role, content };
    if (message.tool_calls && message.tool_calls.length > 0) {
      converted.tool_calls = message.tool_calls.map((call) => ({
        id: call.id,
        type: 'function',
        function: { name: call.function.name, arguments: call.function.arguments },
      }));
    }
    out.push(converted);
  }
  return out;
}
