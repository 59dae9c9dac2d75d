//! Closing a server whose process group leaves zombies behind, as happens in a container whose
//! PID 1 is not an init and never reaps orphans: zombies are not waited for (Linux reads /proc).
//! The portable POSIX path (`portable-posix`, as on macOS, whose launchd reaps orphans) cannot
//! tell a zombie from a live member: it waits for it, bounded by two grace periods. Its own test
//! binary, because it makes the test process a subreaper that never reaps.

mod common;

use common::*;
use mcp_client::{Client, ConnectMode};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zombies_left_in_the_server_group_do_not_hold_up_close() {
    // Orphans of this process's children now become this process's children, and it never
    // reaps them (tokio only waits for the children it spawned).
    // SAFETY: prctl with an integer argument.
    assert_eq!(unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) }, 0);
    let grace = Duration::from_secs(1);
    let fx = Fixture::modern(&["--spawn-grandchild"]);
    let mut stdio = shell_stdio(PID_SCRIPT, &fx.args());
    stdio.shutdown_grace = grace;
    let client = Client::new(config_for(stdio, ConnectMode::Modern));
    let logs = collect_logs(&client);
    client.connect().await.unwrap();
    let grandchild: i32 = stderr_line(&logs, "fixture: grandchild pid ")
        .await
        .trim()
        .parse()
        .unwrap();

    // The server exits on stdin EOF; its group keeps the grandchild, which SIGTERM turns into a
    // zombie nobody reaps. The old probe (killpg 0) counted it as alive: two more grace periods.
    let ((), elapsed) = timed(Duration::from_secs(10), client.close()).await;
    let zombie = process_exists(grandchild as u32) && !process_alive(grandchild as u32);
    // SAFETY: reaping our own adopted child.
    unsafe { libc::waitpid(grandchild, std::ptr::null_mut(), 0) };
    assert!(zombie, "the scenario needs the grandchild to be left as a zombie");
    if cfg!(feature = "portable-posix") {
        // SIGTERM, a grace period, SIGKILL, a grace period: then close gives up on the group.
        assert!(elapsed >= grace * 2, "close took {elapsed:?}: did it see the zombie?");
        assert!(
            elapsed < grace * 3,
            "close took {elapsed:?}, more than two grace periods"
        );
    } else {
        assert!(elapsed < grace, "close took {elapsed:?}, waiting for a zombie");
    }
}
