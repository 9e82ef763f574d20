//! Scripting: which rule answers which request.

use super::*;

#[test]
fn tool_result_rules_come_first_and_prompt_rules_never_see_tool_results() {
    let script = Script::new()
        .on_prompt("run", Reply::tool("Bash", json!({"command": "ls"})))
        .on_tool_result("needle", Reply::text("saw the needle"))
        .rule(Rule::on_any_tool_result(Reply::text("some tool")).and_prompt("other"));
    let (label, reply) = script.choose(&turn("run it", None));
    assert_eq!((label.as_str(), reply.tool_calls().len()), ("rules[0]", 1));
    let (label, reply) = script.choose(&turn("run it", Some("a needle here")));
    assert_eq!(
        (label.as_str(), reply.text_str()),
        ("rules[1]", "saw the needle")
    );
    let (label, _) = script.choose(&turn("run other", Some("hay")));
    assert_eq!(label, "rules[2]");
    // An unmatched tool result gets the default, not the rule that called the tool.
    let (label, reply) = script.choose(&turn("run it", Some("hay")));
    assert_eq!(
        (label.as_str(), reply.text_str()),
        ("default", "Default fake reply.")
    );
    assert_eq!(chunk_text("héllo wörld", 4), ["héll", "o wö", "rld"]);
}
