//! Windows: starting the stdio server, its process tree in a Job Object, and learning when it
//! exits. The same seam as `child.rs` on Unix (`command`, `spawn`, [`Group`], `describe_exit`).
//!
//! - The program is looked up on `PATH` with each `PATHEXT` extension, so `npx` finds
//!   `npx.cmd` (the standard library alone tries only `.exe`). A `.cmd`/`.bat` runs under
//!   `cmd.exe`; the standard library refuses arguments it cannot quote safely for it, and that
//!   refusal is reported as such.
//! - The child gets no console window (`CREATE_NO_WINDOW`) and joins a Job Object with
//!   kill-on-close: closing the job's last handle (the transport's close, its drop, or the host
//!   process ending) ends every process of the tree, a wrapper's real server included. It is
//!   started suspended and resumed once in the job, so nothing it starts escapes the job.
//! - The pipes the standard library creates are overlapped named pipes on our side, so they
//!   join tokio's completion port: no thread per pipe. The process's reaper (`reaper`) waits
//!   for the exits, one thread for up to 63 children.

use std::ffi::{OsStr, OsString};
use std::io;
use std::os::windows::io::{AsRawHandle, FromRawHandle, IntoRawHandle, OwnedHandle};
use std::os::windows::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use tokio::net::windows::named_pipe::NamedPipeServer;
use tokio::sync::watch;
use windows_sys::Win32::Foundation::INVALID_HANDLE_VALUE;
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, Thread32First, Thread32Next, TH32CS_SNAPTHREAD, THREADENTRY32,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectBasicAccountingInformation, JobObjectExtendedLimitInformation,
    QueryInformationJobObject, SetInformationJobObject, TerminateJobObject, JOBOBJECT_BASIC_ACCOUNTING_INFORMATION,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
};
use windows_sys::Win32::System::Threading::{
    OpenThread, ResumeThread, CREATE_NO_WINDOW, CREATE_SUSPENDED, THREAD_SUSPEND_RESUME,
};

/// The reaper needs no nudge on Windows: its wait ends by itself when a child exits.
pub(crate) use super::reaper::expect_exit;

/// The read end of a child's stdout or stderr, on the reactor.
pub(crate) type PipeReader = NamedPipeServer;

/// A started child: the job holding its tree, its pipes, and its exit status once it has
/// exited (`None` until then).
pub(crate) struct Child {
    pub group: Group,
    pub stdin: NamedPipeServer,
    pub stdout: PipeReader,
    pub stderr: PipeReader,
    pub exit: watch::Receiver<Option<ExitStatus>>,
}

/// Extensions tried when `PATHEXT` is not set (Windows' own default, in its order).
const DEFAULT_PATHEXT: &str = ".COM;.EXE;.BAT;.CMD";

/// The command for `program`, found on `PATH` with `PATHEXT`, without a console window, started
/// suspended (`spawn` resumes it in its job).
pub(crate) fn command(program: &str) -> io::Result<Command> {
    let found = resolve(
        program,
        std::env::var_os("PATH").as_deref(),
        std::env::var_os("PATHEXT").as_deref(),
    );
    let mut cmd = Command::new(found.unwrap_or_else(|| PathBuf::from(program)));
    cmd.creation_flags(CREATE_NO_WINDOW | CREATE_SUSPENDED);
    Ok(cmd)
}

/// Where `program` is: a name without a directory is searched in each `PATH` entry, as given
/// (if it has an extension) and then with each `PATHEXT` extension; a path is tried as given,
/// then with each extension. `None`: not found (the standard library's own search decides).
pub(crate) fn resolve(program: &str, path: Option<&OsStr>, pathext: Option<&OsStr>) -> Option<PathBuf> {
    let exts: Vec<String> = pathext
        .and_then(OsStr::to_str)
        .filter(|p| !p.trim().is_empty())
        .unwrap_or(DEFAULT_PATHEXT)
        .split(';')
        .map(str::trim)
        .filter(|e| e.starts_with('.') && e.len() > 1)
        .map(str::to_string)
        .collect();
    let candidates = |base: &Path| -> Vec<PathBuf> {
        let mut all = Vec::with_capacity(exts.len() + 1);
        if base.extension().is_some() {
            all.push(base.to_path_buf());
        }
        for ext in &exts {
            let mut name = OsString::from(base.as_os_str());
            name.push(ext);
            all.push(PathBuf::from(name));
        }
        all
    };
    let given = Path::new(program);
    if program.contains(['/', '\\', ':']) {
        return candidates(given).into_iter().find(|p| p.is_file());
    }
    std::env::split_paths(path?)
        .filter(|dir| !dir.as_os_str().is_empty())
        .flat_map(|dir| candidates(&dir.join(given)))
        .find(|p| p.is_file())
}

/// Whether `program` runs under `cmd.exe`.
fn is_batch(program: &Path) -> bool {
    program
        .extension()
        .and_then(OsStr::to_str)
        .is_some_and(|e| e.eq_ignore_ascii_case("cmd") || e.eq_ignore_ascii_case("bat"))
}

/// The Job Object holding the child's process tree: what shutdown ends.
pub(crate) struct Group {
    job: OwnedHandle,
}

impl Group {
    fn new() -> io::Result<Group> {
        // SAFETY: creates an unnamed job with default security (no pointers in).
        let job = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if job.is_null() {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `job` was just created and is owned by nothing else.
        let job = unsafe { OwnedHandle::from_raw_handle(job) };
        // SAFETY: an all-zero limit structure is valid (no limits); one flag is set on it.
        let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        // SAFETY: passes a local structure of the size given, for our own job.
        let set = unsafe {
            SetInformationJobObject(
                job.as_raw_handle(),
                JobObjectExtendedLimitInformation,
                (&limits as *const JOBOBJECT_EXTENDED_LIMIT_INFORMATION).cast(),
                size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
        };
        if set == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Group { job })
    }

    /// Windows has no polite stop for a process without a console: the same as [`Group::kill`].
    pub fn terminate(&self) {
        self.kill();
    }

    /// Ends every process in the job.
    pub fn kill(&self) {
        // SAFETY: our own open job; ending an empty job is harmless.
        unsafe { TerminateJobObject(self.job.as_raw_handle(), 1) };
    }

    /// Whether a process of the tree is still running.
    pub fn alive(&self) -> bool {
        // SAFETY: an all-zero accounting structure is valid; the call fills the local.
        let mut info: JOBOBJECT_BASIC_ACCOUNTING_INFORMATION = unsafe { std::mem::zeroed() };
        // SAFETY: queries our own job into a local of the size given.
        let ok = unsafe {
            QueryInformationJobObject(
                self.job.as_raw_handle(),
                JobObjectBasicAccountingInformation,
                (&mut info as *mut JOBOBJECT_BASIC_ACCOUNTING_INFORMATION).cast(),
                size_of::<JOBOBJECT_BASIC_ACCOUNTING_INFORMATION>() as u32,
                std::ptr::null_mut(),
            )
        };
        ok == 0 || info.ActiveProcesses > 0
    }
}

/// Spawns `cmd` (whose stdio must all be piped) into a new job, and hands it to the reaper.
/// Needs a runtime context (the pipes join its reactor).
pub(crate) fn spawn(cmd: &mut Command) -> io::Result<Child> {
    let group = Group::new()?;
    let program = PathBuf::from(cmd.get_program());
    let mut child = cmd.spawn().map_err(|e| match e.kind() {
        io::ErrorKind::InvalidInput if is_batch(&program) => io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "`{}` is a batch file, run by cmd.exe, and an argument cannot be passed to cmd.exe \
                 safely (a line break): the standard library refused it rather than quote it wrongly; \
                 pass such a value through `env`, or start the program the batch file wraps ({e})",
                program.display()
            ),
        ),
        _ => e,
    })?;
    // SAFETY: both handles are open for the call (the child's is owned by `child`).
    if unsafe { AssignProcessToJobObject(group.job.as_raw_handle(), child.as_raw_handle()) } == 0 {
        let e = io::Error::last_os_error();
        let _ = child.kill();
        let _ = child.wait();
        return Err(io::Error::new(
            e.kind(),
            format!("cannot put the server in a job object: {e}"),
        ));
    }
    if let Err(e) = resume(child.id()) {
        group.kill();
        let _ = child.wait();
        return Err(io::Error::new(e.kind(), format!("cannot resume the server: {e}")));
    }
    let taken = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let (Some(stdin), Some(stdout), Some(stderr)) = taken else {
        group.kill();
        let _ = child.wait();
        return Err(io::Error::other("the child's stdio is not piped"));
    };
    // SAFETY: each handle is our end of a pipe the standard library created for overlapped
    // I/O; ownership passes to the reactor's pipe.
    let pipes = unsafe {
        (|| {
            Ok::<_, io::Error>((
                NamedPipeServer::from_raw_handle(stdin.into_raw_handle())?,
                NamedPipeServer::from_raw_handle(stdout.into_raw_handle())?,
                NamedPipeServer::from_raw_handle(stderr.into_raw_handle())?,
            ))
        })()
    };
    let (exit_tx, exit) = watch::channel(None);
    if let Err(e) = super::reaper::watch(child, exit_tx) {
        group.kill();
        return Err(e);
    }
    let (stdin, stdout, stderr) = match pipes {
        Ok(p) => p,
        Err(e) => {
            group.kill();
            return Err(e);
        }
    };
    Ok(Child {
        group,
        stdin,
        stdout,
        stderr,
        exit,
    })
}

/// Resumes the threads of process `pid` (started suspended: its one thread). The standard
/// library keeps the thread's handle to itself, so the thread is found in a snapshot.
fn resume(pid: u32) -> io::Result<()> {
    // SAFETY: takes a snapshot of the system's threads (no pointers in).
    let snapshot = unsafe { CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0) };
    if snapshot == INVALID_HANDLE_VALUE {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `snapshot` was just created and is owned by nothing else.
    let snapshot = unsafe { OwnedHandle::from_raw_handle(snapshot) };
    // SAFETY: an all-zero entry is valid; its size is set before use.
    let mut entry: THREADENTRY32 = unsafe { std::mem::zeroed() };
    entry.dwSize = size_of::<THREADENTRY32>() as u32;
    let mut resumed = false;
    // SAFETY: walks our own snapshot through a local entry of the size it declares.
    let mut more = unsafe { Thread32First(snapshot.as_raw_handle(), &mut entry) } != 0;
    while more {
        if entry.th32OwnerProcessID == pid {
            // SAFETY: opens a thread of our own suspended child by id.
            let thread = unsafe { OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID) };
            if !thread.is_null() {
                // SAFETY: `thread` was just opened and is owned by nothing else.
                let thread = unsafe { OwnedHandle::from_raw_handle(thread) };
                // SAFETY: resumes the open thread.
                resumed |= unsafe { ResumeThread(thread.as_raw_handle()) } != u32::MAX;
            }
        }
        // SAFETY: as above.
        more = unsafe { Thread32Next(snapshot.as_raw_handle(), &mut entry) } != 0;
    }
    match resumed {
        true => Ok(()),
        false => Err(io::Error::other("its thread was not found")),
    }
}

/// How the child ended, for error messages (NTSTATUS codes such as an access violation's in
/// hexadecimal).
pub(crate) fn describe_exit(status: ExitStatus) -> String {
    match status.code() {
        Some(code) if (code as u32) >= 0xC000_0000 => format!("exited with status {:#010X}", code as u32),
        Some(code) => format!("exited with status {code}"),
        None => "exited".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::resolve;
    use std::ffi::OsStr;

    #[test]
    fn names_are_found_with_pathext() {
        let dir = std::env::temp_dir().join(format!("mcp-resolve-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("tool.cmd"), "@echo off\r\n").unwrap();
        let path = std::env::join_paths([dir.clone()]).unwrap();
        let found = resolve("tool", Some(&path), Some(OsStr::new(".EXE;.CMD"))).unwrap();
        assert_eq!(found, dir.join("tool.CMD"));
        assert!(resolve("missing", Some(&path), None).is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
