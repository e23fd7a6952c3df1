//! Bounded bodies for the requests outside the measuring client (readiness, `/v1/models`,
//! `/metrics`, `/tokenize`): a server cannot make perfgate hold more than a fixed number of bytes,
//! however fast or long it writes.

/// The most bytes of a `/v1/models`, `/health` or other small JSON answer perfgate reads.
pub const SMALL_BODY: usize = 8 << 20;
/// The most bytes of a `/metrics` page or a `/tokenize` answer perfgate reads.
pub const LARGE_BODY: usize = 64 << 20;

/// Read `resp`'s body up to `limit` bytes; past it, an error saying so (the rest is not read).
pub async fn read_limited(mut resp: reqwest::Response, limit: usize) -> Result<Vec<u8>, String> {
    if resp.content_length().is_some_and(|n| n > limit as u64) {
        return Err(too_large(limit));
    }
    let mut out = Vec::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| e.without_url().to_string())?
    {
        if out.len() + chunk.len() > limit {
            return Err(too_large(limit));
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

/// [`read_limited`] as text (invalid UTF-8 replaced).
pub async fn text_limited(resp: reqwest::Response, limit: usize) -> Result<String, String> {
    read_limited(resp, limit)
        .await
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

fn too_large(limit: usize) -> String {
    format!("the answer is larger than {} MiB: not read", limit >> 20)
}
