//! Ids no two runs or calls share: 16 hex digits from the OS's random source, for a run
//! ([`crate::runs::new_id`]) and a tool call ([`crate::session::new_call_id`]) alike.
//! Random rather than counted: a run reopened in another process (an editor's session
//! loaded after a restart) goes on with no counter to pick up.

/// 16 hex digits from the OS's random source (the clock's and the pid's, should it fail).
pub fn random_hex() -> String {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos());
        let mixed = (nanos as u64) ^ u64::from(std::process::id()).rotate_left(40);
        bytes = mixed.to_be_bytes();
    }
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
