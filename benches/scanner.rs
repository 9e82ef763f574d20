//! Scanner throughput benchmark (filled in with the scanner).
fn main() {}
