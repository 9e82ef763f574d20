//! The wire formats: server-sent events of Anthropic Messages, Gemini, OpenAI Responses
//! and OpenAI Chat Completions.

use super::*;

/// `prefix` followed by 24 hex digits, unique within the process.
pub(super) fn fresh_id(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mix = |mut z: u64| {
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let a = mix(nanos ^ n.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let b = mix(a ^ n);
    format!("{prefix}{a:016x}{:08x}", b as u32)
}

/// Splits `text` into pieces of `size` characters (never inside a UTF-8 character).
pub fn chunk_text(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(size.max(1))
        .map(|c| c.iter().collect())
        .collect()
}

pub(super) fn output_tokens(reply: &Reply) -> u64 {
    let chars = reply.text.chars().count()
        + reply.thinking.as_deref().map_or(0, |t| t.chars().count())
        + reply
            .tool_calls
            .iter()
            .map(|c| c.input.to_string().len() + c.name.len())
            .sum::<usize>();
    (chars / 4).max(1) as u64
}

pub(super) fn chunk_size(reply: &Reply) -> usize {
    reply.chunk_size.unwrap_or(DEFAULT_CHUNK_SIZE)
}

pub(super) fn sse_event(name: &str, data: &Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

pub(super) fn anthropic_usage(input_tokens: u64, output_tokens: u64) -> Value {
    json!({"input_tokens": input_tokens, "output_tokens": output_tokens,
           "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0})
}

/// The content blocks of a reply, as (start block, deltas, complete block).
pub(super) fn anthropic_blocks(reply: &Reply) -> Vec<(Value, Vec<Value>, Value)> {
    let size = chunk_size(reply);
    let mut blocks = Vec::new();
    if let Some(thinking) = &reply.thinking {
        let mut deltas: Vec<Value> = chunk_text(thinking, size)
            .into_iter()
            .map(|t| json!({"type": "thinking_delta", "thinking": t}))
            .collect();
        deltas.push(json!({"type": "signature_delta", "signature": "fake-signature"}));
        blocks.push((
            json!({"type": "thinking", "thinking": "", "signature": ""}),
            deltas,
            json!({"type": "thinking", "thinking": thinking, "signature": "fake-signature"}),
        ));
    }
    if !reply.text.is_empty() || reply.tool_calls.is_empty() {
        let deltas = chunk_text(&reply.text, size)
            .into_iter()
            .map(|t| json!({"type": "text_delta", "text": t}))
            .collect();
        blocks.push((
            json!({"type": "text", "text": ""}),
            deltas,
            json!({"type": "text", "text": reply.text}),
        ));
    }
    for call in &reply.tool_calls {
        let id = fresh_id("toolu_fake_");
        blocks.push((
            json!({"type": "tool_use", "id": id, "name": call.name, "input": {}}),
            vec![json!({"type": "input_json_delta", "partial_json": call.input.to_string()})],
            json!({"type": "tool_use", "id": id, "name": call.name, "input": call.input}),
        ));
    }
    blocks
}

pub(super) fn anthropic_stop_reason(reply: &Reply) -> &'static str {
    if reply.tool_calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    }
}

pub(super) fn anthropic_events(reply: &Reply, model: &str, input_tokens: u64) -> Vec<String> {
    let mut events = vec![sse_event(
        "message_start",
        &json!({"type": "message_start", "message": {
            "id": fresh_id("msg_fake_"), "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": anthropic_usage(input_tokens, 1)}}),
    )];
    events.push(sse_event("ping", &json!({"type": "ping"})));
    for (index, (start, deltas, _)) in anthropic_blocks(reply).into_iter().enumerate() {
        events.push(sse_event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        for delta in deltas {
            events.push(sse_event(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ));
        }
        events.push(sse_event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
    }
    events.push(sse_event(
        "message_delta",
        &json!({"type": "message_delta",
                "delta": {"stop_reason": anthropic_stop_reason(reply), "stop_sequence": null},
                "usage": {"output_tokens": output_tokens(reply)}}),
    ));
    events.push(sse_event("message_stop", &json!({"type": "message_stop"})));
    events
}

pub(super) fn anthropic_message(reply: &Reply, model: &str, input_tokens: u64) -> Value {
    let content: Vec<Value> = anthropic_blocks(reply)
        .into_iter()
        .map(|(_, _, whole)| whole)
        .collect();
    json!({"id": fresh_id("msg_fake_"), "type": "message", "role": "assistant", "model": model,
           "content": content, "stop_reason": anthropic_stop_reason(reply), "stop_sequence": null,
           "usage": anthropic_usage(input_tokens, output_tokens(reply))})
}

/// The output tokens a Gemini answer of `text` reports.
pub(super) fn gemini_output_tokens(text: &str) -> u64 {
    (text.chars().count() / 4).max(1) as u64
}

pub(super) fn usage_gemini(prompt_tokens: u64, text: &str) -> Value {
    let out = gemini_output_tokens(text);
    json!({"promptTokenCount": prompt_tokens, "candidatesTokenCount": out,
           "totalTokenCount": prompt_tokens + out})
}

pub(super) fn gemini_chunk(
    parts: Vec<Value>,
    model: &str,
    response_id: &str,
    usage: Option<Value>,
) -> Value {
    let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
    let mut chunk = json!({"modelVersion": model, "responseId": response_id});
    if let Some(usage) = usage {
        candidate["finishReason"] = json!("STOP");
        chunk["usageMetadata"] = usage;
    }
    chunk["candidates"] = json!([candidate]);
    chunk
}

/// `data: <json>\r\n\r\n`: no `event:` lines, which the SDK's parser cannot skip.
pub(super) fn gemini_event(chunk: &Value) -> String {
    format!("data: {chunk}\r\n\r\n")
}

/// One chunk per thinking piece, one per text piece; the last chunk carries the function calls,
/// `finishReason: "STOP"` and the usage.
pub(super) fn gemini_chunks(reply: &Reply, model: &str, input_tokens: u64) -> Vec<Value> {
    let size = chunk_size(reply);
    let id = fresh_id("fake");
    let mut parts: Vec<Vec<Value>> = Vec::new();
    if let Some(thinking) = &reply.thinking {
        for piece in chunk_text(thinking, size) {
            parts.push(vec![json!({"text": piece, "thought": true})]);
        }
    }
    for piece in chunk_text(&reply.text, size) {
        parts.push(vec![json!({"text": piece})]);
    }
    let calls: Vec<Value> = reply
        .tool_calls
        .iter()
        .map(|c| json!({"functionCall": {"name": c.name, "args": c.input}}))
        .collect();
    if !calls.is_empty() || parts.is_empty() {
        parts.push(if calls.is_empty() {
            vec![json!({"text": ""})]
        } else {
            calls
        });
    }
    let usage = usage_gemini(input_tokens, &reply.text);
    let last = parts.len() - 1;
    parts
        .into_iter()
        .enumerate()
        .map(|(i, p)| gemini_chunk(p, model, &id, (i == last).then(|| usage.clone())))
        .collect()
}

pub(super) fn gemini_whole(reply: &Reply, model: &str, input_tokens: u64) -> Value {
    let mut parts = Vec::new();
    if let Some(thinking) = &reply.thinking {
        parts.push(json!({"text": thinking, "thought": true}));
    }
    if !reply.text.is_empty() || reply.tool_calls.is_empty() {
        parts.push(json!({"text": reply.text}));
    }
    for c in &reply.tool_calls {
        parts.push(json!({"functionCall": {"name": c.name, "args": c.input}}));
    }
    gemini_chunk(
        parts,
        model,
        &fresh_id("fake"),
        Some(usage_gemini(input_tokens, &reply.text)),
    )
}

/// The stream events of each output item (without `sequence_number`), and the completed
/// response object.
pub(super) fn openai_items(reply: &Reply, model: &str, input_tokens: u64) -> (Vec<Value>, Value) {
    let size = chunk_size(reply);
    let mut events = Vec::new();
    let mut output = Vec::new();
    if let Some(thinking) = &reply.thinking {
        let index = output.len();
        let id = fresh_id("rs_fake_");
        let done = json!({"type": "reasoning", "id": id, "status": "completed",
            "summary": [{"type": "summary_text", "text": thinking}]});
        events.push(
            json!({"type": "response.output_item.added", "output_index": index,
            "item": {"type": "reasoning", "id": id, "status": "in_progress", "summary": []}}),
        );
        events.push(
            json!({"type": "response.reasoning_summary_part.added", "item_id": id,
            "output_index": index, "summary_index": 0,
            "part": {"type": "summary_text", "text": ""}}),
        );
        for piece in chunk_text(thinking, size) {
            events.push(
                json!({"type": "response.reasoning_summary_text.delta", "item_id": id,
                "output_index": index, "summary_index": 0, "delta": piece}),
            );
        }
        events.push(
            json!({"type": "response.reasoning_summary_text.done", "item_id": id,
            "output_index": index, "summary_index": 0, "text": thinking}),
        );
        events.push(
            json!({"type": "response.reasoning_summary_part.done", "item_id": id,
            "output_index": index, "summary_index": 0,
            "part": {"type": "summary_text", "text": thinking}}),
        );
        events.push(
            json!({"type": "response.output_item.done", "output_index": index,
            "item": done}),
        );
        output.push(done);
    }
    if !reply.text.is_empty() || reply.tool_calls.is_empty() {
        let index = output.len();
        let id = fresh_id("msg_fake_");
        let part = json!({"type": "output_text", "text": reply.text, "annotations": []});
        let done = json!({"type": "message", "id": id, "status": "completed",
            "role": "assistant", "content": [part]});
        events.push(
            json!({"type": "response.output_item.added", "output_index": index,
            "item": {"type": "message", "id": id, "status": "in_progress", "role": "assistant",
                     "content": []}}),
        );
        events.push(json!({"type": "response.content_part.added", "item_id": id,
            "output_index": index, "content_index": 0,
            "part": {"type": "output_text", "text": "", "annotations": []}}));
        for piece in chunk_text(&reply.text, size) {
            events.push(json!({"type": "response.output_text.delta", "item_id": id,
                "output_index": index, "content_index": 0, "delta": piece}));
        }
        events.push(json!({"type": "response.output_text.done", "item_id": id,
            "output_index": index, "content_index": 0, "text": reply.text}));
        events.push(json!({"type": "response.content_part.done", "item_id": id,
            "output_index": index, "content_index": 0, "part": part}));
        events.push(
            json!({"type": "response.output_item.done", "output_index": index,
            "item": done}),
        );
        output.push(done);
    }
    for call in &reply.tool_calls {
        let index = output.len();
        let id = fresh_id("fc_fake_");
        let call_id = fresh_id("call_fake_");
        // An input that is a string is a free-form (custom) tool's, as Codex's
        // `apply_patch` takes its patch.
        if let Some(text) = call.input.as_str() {
            let done = json!({"type": "custom_tool_call", "id": id, "call_id": call_id,
                "name": call.name, "input": text, "status": "completed"});
            events.push(
                json!({"type": "response.output_item.added", "output_index": index,
                "item": {"type": "custom_tool_call", "id": id, "call_id": call_id,
                         "name": call.name, "input": "", "status": "in_progress"}}),
            );
            events.push(
                json!({"type": "response.custom_tool_call_input.delta", "item_id": id,
                "output_index": index, "delta": text}),
            );
            events.push(
                json!({"type": "response.custom_tool_call_input.done", "item_id": id,
                "output_index": index, "input": text}),
            );
            events.push(
                json!({"type": "response.output_item.done", "output_index": index,
                "item": done}),
            );
            output.push(done);
            continue;
        }
        let arguments = call.input.to_string();
        let mut done = json!({"type": "function_call", "id": id, "call_id": call_id,
            "name": call.name, "arguments": arguments, "status": "completed"});
        let mut added = json!({"type": "function_call", "id": id, "call_id": call_id,
            "name": call.name, "arguments": "", "status": "in_progress"});
        if let Some(namespace) = &call.namespace {
            done["namespace"] = json!(namespace);
            added["namespace"] = json!(namespace);
        }
        events.push(
            json!({"type": "response.output_item.added", "output_index": index, "item": added}),
        );
        events.push(
            json!({"type": "response.function_call_arguments.delta", "item_id": id,
            "output_index": index, "delta": arguments}),
        );
        events.push(
            json!({"type": "response.function_call_arguments.done", "item_id": id,
            "output_index": index, "arguments": arguments}),
        );
        events.push(
            json!({"type": "response.output_item.done", "output_index": index,
            "item": done}),
        );
        output.push(done);
    }
    let out_tokens = output_tokens(reply);
    let response = json!({
        "id": fresh_id("resp_fake_"), "object": "response",
        "created_at": SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
        "model": model, "parallel_tool_calls": true, "tool_choice": "auto", "tools": [],
        "status": "completed", "output": output,
        "usage": {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": out_tokens, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": input_tokens + out_tokens}});
    (events, response)
}

pub(super) fn openai_events(reply: &Reply, model: &str, input_tokens: u64) -> Vec<String> {
    let (items, response) = openai_items(reply, model, input_tokens);
    let mut pending = response.clone();
    pending["status"] = json!("in_progress");
    pending["output"] = json!([]);
    pending
        .as_object_mut()
        .map(|o| o.remove("usage"))
        .unwrap_or_default();
    let mut all = vec![
        json!({"type": "response.created", "response": pending}),
        json!({"type": "response.in_progress", "response": pending}),
    ];
    all.extend(items);
    all.push(json!({"type": "response.completed", "response": response}));
    all.into_iter()
        .enumerate()
        .map(|(seq, mut event)| {
            event["sequence_number"] = json!(seq);
            let name = event["type"].as_str().unwrap_or("").to_string();
            sse_event(&name, &event)
        })
        .collect()
}

/// A Chat Completions chunk with one choice.
fn chat_chunk(id: &str, model: &str, delta: Value, finish: Option<&str>) -> Value {
    json!({"id": id, "object": "chat.completion.chunk", "created": 1, "model": model,
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
}

fn chat_usage(reply: &Reply, input_tokens: u64) -> Value {
    let out = output_tokens(reply);
    json!({"prompt_tokens": input_tokens, "completion_tokens": out,
           "total_tokens": input_tokens + out})
}

fn chat_finish(reply: &Reply) -> &'static str {
    if reply.tool_calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    }
}

/// A streamed Chat Completions answer: the text in deltas, each tool call's arguments
/// whole, the finish reason, a usage chunk with no choices, then `[DONE]`.
pub(super) fn chat_events(reply: &Reply, model: &str, input_tokens: u64) -> Vec<String> {
    let id = fresh_id("chatcmpl-");
    let mut chunks = vec![chat_chunk(
        &id,
        model,
        json!({"role": "assistant", "content": ""}),
        None,
    )];
    for piece in chunk_text(&reply.text, chunk_size(reply)) {
        chunks.push(chat_chunk(&id, model, json!({"content": piece}), None));
    }
    for (index, call) in reply.tool_calls.iter().enumerate() {
        let call = json!({"index": index, "id": fresh_id("call_fake_"), "type": "function",
            "function": {"name": call.name, "arguments": call.input.to_string()}});
        chunks.push(chat_chunk(&id, model, json!({"tool_calls": [call]}), None));
    }
    chunks.push(chat_chunk(&id, model, json!({}), Some(chat_finish(reply))));
    chunks.push(
        json!({"id": id, "object": "chat.completion.chunk", "created": 1,
        "model": model, "choices": [], "usage": chat_usage(reply, input_tokens)}),
    );
    let mut events: Vec<String> = chunks
        .into_iter()
        .map(|chunk| format!("data: {chunk}\n\n"))
        .collect();
    events.push("data: [DONE]\n\n".to_string());
    events
}

/// A whole Chat Completions answer.
pub(super) fn chat_completion(reply: &Reply, model: &str, input_tokens: u64) -> Value {
    let mut message = json!({"role": "assistant", "content": reply.text});
    if !reply.tool_calls.is_empty() {
        message["tool_calls"] = reply
            .tool_calls
            .iter()
            .map(|call| {
                json!({"id": fresh_id("call_fake_"), "type": "function",
                "function": {"name": call.name, "arguments": call.input.to_string()}})
            })
            .collect();
    }
    json!({"id": fresh_id("chatcmpl-"), "object": "chat.completion", "created": 1,
           "model": model,
           "choices": [{"index": 0, "message": message, "finish_reason": chat_finish(reply)}],
           "usage": chat_usage(reply, input_tokens)})
}
