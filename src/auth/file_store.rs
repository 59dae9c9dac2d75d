//! A token store in a directory (`oauth.token_store_dir`): one file per authorization-server
//! issuer (named by the SHA-256 of the issuer, so no issuer text reaches a path), written 0600 in
//! a 0700 directory, replaced atomically (write, then rename). Its lock is an advisory lock
//! (`flock`) on a per-issuer lock file, so processes sharing the directory never spend the same
//! refresh token. Records hold secrets: the directory must be the user's own.

use super::store::{StoreGuard, TokenStore};
use crate::transport::BoxFuture;
use serde_json::Value;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// A record larger than this is not read (a store holds a client and a few tokens).
const RECORD_MAX: u64 = 1024 * 1024;

/// Token records in files under one directory, locked across processes (see the module).
pub struct FileTokenStore {
    dir: PathBuf,
}

impl FileTokenStore {
    /// A store in `dir` (created, 0700, on the first save or lock).
    pub fn new(dir: impl Into<PathBuf>) -> FileTokenStore {
        FileTokenStore { dir: dir.into() }
    }

    fn path(&self, issuer: &str, ext: &str) -> PathBuf {
        let digest = ring::digest::digest(&ring::digest::SHA256, issuer.as_bytes());
        let name: String = digest.as_ref()[..16].iter().map(|b| format!("{b:02x}")).collect();
        self.dir.join(format!("{name}.{ext}"))
    }

    fn ensure_dir(dir: &Path) -> std::io::Result<()> {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(dir)
    }

    fn open_private(path: &Path, truncate: bool) -> std::io::Result<File> {
        let mut options = OpenOptions::new();
        options.create(true).write(true).truncate(truncate);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        options.open(path)
    }
}

/// An exclusive advisory lock on `file` (released when it is closed); `try_only`: fail at once
/// rather than wait. (`File::lock` needs Rust 1.89; the library builds with 1.85.)
#[cfg(unix)]
fn flock(file: &File, try_only: bool) -> std::io::Result<()> {
    use std::os::unix::io::AsRawFd;
    let op = if try_only {
        libc::LOCK_EX | libc::LOCK_NB
    } else {
        libc::LOCK_EX
    };
    loop {
        // SAFETY: flock on a descriptor `file` owns for the whole call.
        if unsafe { libc::flock(file.as_raw_fd(), op) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Windows: `LockFileEx` on the whole file (released when the handle is closed).
#[cfg(windows)]
fn flock(file: &File, try_only: bool) -> std::io::Result<()> {
    use std::os::windows::io::AsRawHandle;
    use windows_sys::Win32::Storage::FileSystem::{LockFileEx, LOCKFILE_EXCLUSIVE_LOCK, LOCKFILE_FAIL_IMMEDIATELY};
    let flags = LOCKFILE_EXCLUSIVE_LOCK | if try_only { LOCKFILE_FAIL_IMMEDIATELY } else { 0 };
    // SAFETY: an all-zero OVERLAPPED (offset 0) is valid for a synchronous handle.
    let mut at: windows_sys::Win32::System::IO::OVERLAPPED = unsafe { std::mem::zeroed() };
    // SAFETY: locks the whole range of a handle `file` owns for the whole call, through a local.
    if unsafe { LockFileEx(file.as_raw_handle(), flags, 0, u32::MAX, u32::MAX, &mut at) } != 0 {
        return Ok(());
    }
    Err(std::io::Error::last_os_error())
}

#[cfg(not(any(unix, windows)))]
fn flock(_file: &File, _try_only: bool) -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "no advisory locks here",
    ))
}

/// Runs blocking file work off the runtime's threads.
fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> BoxFuture<'static, Option<T>> {
    Box::pin(async move { tokio::task::spawn_blocking(f).await.ok() })
}

impl TokenStore for FileTokenStore {
    fn load(&self, issuer: &str) -> BoxFuture<'static, Option<Value>> {
        let path = self.path(issuer, "json");
        let read = blocking(move || {
            use std::io::Read;
            let mut text = Vec::new();
            File::open(&path).ok()?.take(RECORD_MAX).read_to_end(&mut text).ok()?;
            serde_json::from_slice::<Value>(&text).ok()
        });
        Box::pin(async move { read.await.flatten() })
    }

    fn save(&self, issuer: &str, record: Option<Value>) -> BoxFuture<'static, ()> {
        let (dir, path, temp) = (self.dir.clone(), self.path(issuer, "json"), self.path(issuer, "tmp"));
        let write = blocking(move || {
            let Some(record) = record else {
                let _ = std::fs::remove_file(&path);
                return;
            };
            let written = FileTokenStore::ensure_dir(&dir)
                .and_then(|()| FileTokenStore::open_private(&temp, true))
                .and_then(|mut f| {
                    f.write_all(record.to_string().as_bytes())?;
                    f.sync_all()
                })
                .and_then(|()| std::fs::rename(&temp, &path));
            if written.is_err() {
                let _ = std::fs::remove_file(&temp);
            }
        });
        Box::pin(async move {
            write.await;
        })
    }

    fn lock(&self, issuer: &str) -> BoxFuture<'static, Option<StoreGuard>> {
        let (dir, path) = (self.dir.clone(), self.path(issuer, "lock"));
        let take = blocking(move || {
            FileTokenStore::ensure_dir(&dir).ok()?;
            let file = FileTokenStore::open_private(&path, false).ok()?;
            // Blocks until no other holder (another process, another store on the same
            // directory) has it; released when the file is closed (the guard dropped).
            flock(&file, false).ok()?;
            Some(Box::new(file) as StoreGuard)
        });
        Box::pin(async move { take.await.flatten() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn records_round_trip_privately_and_locks_exclude() {
        let dir = std::env::temp_dir().join(format!("mcp-file-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = FileTokenStore::new(&dir);
        assert!(store.load("https://as.example").await.is_none());
        store.save("https://as.example", Some(json!({"tokens": {}}))).await;
        assert_eq!(store.load("https://as.example").await, Some(json!({"tokens": {}})));
        assert!(store.load("https://other.example").await.is_none());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let file = store.path("https://as.example", "json");
            assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
            assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
            assert!(!file.to_string_lossy().contains("as.example"));
        }
        // While held, nobody else (another open file: another store, another process) gets it.
        let held = store.lock("https://as.example").await.expect("locked");
        let probe = File::open(store.path("https://as.example", "lock")).unwrap();
        assert!(flock(&probe, true).is_err(), "the lock was taken twice");
        drop(held);
        flock(&probe, true).expect("released with its guard");
        drop(probe);
        assert!(FileTokenStore::new(&dir).lock("https://as.example").await.is_some());
        store.save("https://as.example", None).await;
        assert!(store.load("https://as.example").await.is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
