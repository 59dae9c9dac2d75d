/* The Windows side of the runner (see harness.h): temporary files, the watchdog and the
 * fixture over HTTP, with Win32 calls where harness.c uses POSIX ones. Built only for Windows. */
#ifdef _WIN32
#include "harness.h"

#include <direct.h>
#include <io.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>
#include <tlhelp32.h>

/* ---- files ----------------------------------------------------------------------------------- */

#define TEMP_MAX 64
static char temp_paths[TEMP_MAX][MAX_PATH];
static size_t temp_count;

static bool temp_path(char *buf, size_t n, const char *tag, bool dir)
{
    char root[MAX_PATH];
    DWORD len = GetTempPathA(sizeof root, root);
    if (len == 0 || len >= sizeof root)
        return false;
    for (int attempt = 0; attempt < 100; attempt++) {
        snprintf(buf, n, "%smcp-ctest-%s-%lu-%d", root, tag, (unsigned long)GetCurrentProcessId(),
                 (int)(GetTickCount() % 100000) + attempt);
        bool made = dir ? CreateDirectoryA(buf, NULL) != 0
                        : CloseHandle(CreateFileA(buf, GENERIC_WRITE, 0, NULL, CREATE_NEW,
                                                  FILE_ATTRIBUTE_NORMAL, NULL));
        if (made) {
            if (temp_count < TEMP_MAX)
                snprintf(temp_paths[temp_count++], sizeof temp_paths[0], "%s", buf);
            return true;
        }
    }
    return false;
}

bool temp_file(char *buf, size_t n, const char *tag)
{
    return temp_path(buf, n, tag, false);
}

bool temp_dir(char *buf, size_t n, const char *tag)
{
    return temp_path(buf, n, tag, true);
}

/* Removes a file, or a directory with what it holds. */
static void remove_tree(const char *path)
{
    DWORD attrs = GetFileAttributesA(path);
    if (attrs == INVALID_FILE_ATTRIBUTES)
        return;
    if (!(attrs & FILE_ATTRIBUTE_DIRECTORY)) {
        DeleteFileA(path);
        return;
    }
    char pattern[MAX_PATH];
    snprintf(pattern, sizeof pattern, "%s\\*", path);
    WIN32_FIND_DATAA found;
    HANDLE h = FindFirstFileA(pattern, &found);
    if (h != INVALID_HANDLE_VALUE) {
        do {
            if (strcmp(found.cFileName, ".") == 0 || strcmp(found.cFileName, "..") == 0)
                continue;
            char child[MAX_PATH];
            snprintf(child, sizeof child, "%s\\%s", path, found.cFileName);
            remove_tree(child);
        } while (FindNextFileA(h, &found));
        FindClose(h);
    }
    RemoveDirectoryA(path);
}

void settle_temps(bool keep)
{
    for (size_t i = 0; i < temp_count; i++) {
        if (keep)
            printf("# kept %s\n", temp_paths[i]);
        else
            remove_tree(temp_paths[i]);
    }
    temp_count = 0;
}

/* ---- platform seams ---------------------------------------------------------------------------- */

int wait_wakeup(int fd, int timeout_ms)
{
    DWORD r = WaitForSingleObject((HANDLE)(intptr_t)fd, timeout_ms < 0 ? INFINITE : (DWORD)timeout_ms);
    return r == WAIT_OBJECT_0 ? 1 : r == WAIT_TIMEOUT ? 0 : -1;
}

int thread_count(void)
{
    HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0);
    if (snap == INVALID_HANDLE_VALUE)
        return -1;
    DWORD self = GetCurrentProcessId();
    THREADENTRY32 e;
    e.dwSize = sizeof e;
    int n = 0;
    for (BOOL more = Thread32First(snap, &e); more; more = Thread32Next(snap, &e))
        if (e.th32OwnerProcessID == self)
            n++;
    CloseHandle(snap);
    return n;
}

void t_setenv(const char *name, const char *value)
{
    SetEnvironmentVariableA(name, value);
}

bool real_path(const char *path, char *buf, size_t n)
{
    DWORD len = GetFullPathNameA(path, (DWORD)n, buf, NULL);
    return len > 0 && len < n;
}

bool write_cmd_file(const char *dir, const char *name, const char *body, char *path, size_t n)
{
    snprintf(path, n, "%s\\%s.cmd", dir, name);
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return false;
    bool written = fputs(body, f) >= 0;
    return fclose(f) == 0 && written;
}

/* ---- the watchdog ------------------------------------------------------------------------------ */

static HANDLE watchdog_timer;

static DWORD WINAPI watchdog_thread(LPVOID unused)
{
    (void)unused;
    for (;;) {
        if (WaitForSingleObject(watchdog_timer, INFINITE) == WAIT_OBJECT_0)
            watchdog_expired();
    }
    return 0;
}

void watchdog_arm(unsigned seconds)
{
    if (watchdog_timer == NULL) {
        watchdog_timer = CreateWaitableTimerA(NULL, TRUE, NULL);
        HANDLE t = CreateThread(NULL, 0, watchdog_thread, NULL, 0, NULL);
        if (t)
            CloseHandle(t);
    }
    if (seconds == 0) {
        CancelWaitableTimer(watchdog_timer);
        return;
    }
    LARGE_INTEGER due;
    due.QuadPart = -(LONGLONG)seconds * 10000000LL; /* relative, in 100 ns */
    SetWaitableTimer(watchdog_timer, &due, 0, NULL, NULL, FALSE);
}

/* ---- the fixture over HTTP --------------------------------------------------------------------- */

bool http_fixture_start(struct http_fixture *h, const char *era, bool sse_responses)
{
    memset(h, 0, sizeof *h);
    if (!temp_file(h->record, sizeof h->record, "http"))
        return false;
    SECURITY_ATTRIBUTES inherit = {sizeof inherit, NULL, TRUE};
    HANDLE in_r, in_w, out_r, out_w;
    if (!CreatePipe(&in_r, &in_w, &inherit, 0))
        return false;
    if (!CreatePipe(&out_r, &out_w, &inherit, 0)) {
        CloseHandle(in_r);
        CloseHandle(in_w);
        return false;
    }
    SetHandleInformation(in_w, HANDLE_FLAG_INHERIT, 0);
    SetHandleInformation(out_r, HANDLE_FLAG_INHERIT, 0);
    char cmdline[2048];
    snprintf(cmdline, sizeof cmdline, "\"%s\" --http 127.0.0.1:0 --era %s --record \"%s\"%s",
             fixture_path(), era, h->record, sse_responses ? " --sse-responses" : "");
    STARTUPINFOA si;
    memset(&si, 0, sizeof si);
    si.cb = sizeof si;
    si.dwFlags = STARTF_USESTDHANDLES;
    si.hStdInput = in_r;
    si.hStdOutput = out_w;
    si.hStdError = GetStdHandle(STD_ERROR_HANDLE);
    PROCESS_INFORMATION pi;
    BOOL started = CreateProcessA(NULL, cmdline, NULL, NULL, TRUE, CREATE_NO_WINDOW, NULL, NULL,
                                  &si, &pi);
    CloseHandle(in_r);
    CloseHandle(out_w);
    if (!started) {
        CloseHandle(in_w);
        CloseHandle(out_r);
        t_fail(__FILE__, __LINE__, "cannot start the HTTP fixture (error %lu)",
               (unsigned long)GetLastError());
        return false;
    }
    CloseHandle(pi.hThread);
    h->process = pi.hProcess;
    h->stdin_w = in_w;
    /* one line: "fixture: listening on http://127.0.0.1:PORT/mcp" (a blocking read: the server
     * writes it at once, or exits and ends the pipe) */
    char line[512];
    size_t len = 0;
    DWORD got = 0;
    while (len + 1 < sizeof line && ReadFile(out_r, line + len, 1, &got, NULL) && got == 1) {
        if (line[len] == '\n')
            break;
        len++;
    }
    CloseHandle(out_r);
    while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == '\n'))
        len--;
    line[len] = '\0';
    const char *prefix = "fixture: listening on ";
    if (strncmp(line, prefix, strlen(prefix)) != 0) {
        t_fail(__FILE__, __LINE__, "no URL from the HTTP fixture: \"%s\"", line);
        return false;
    }
    snprintf(h->url, sizeof h->url, "%s", line + strlen(prefix));
    return true;
}

void http_fixture_stop(struct http_fixture *h)
{
    if (h->stdin_w)
        CloseHandle((HANDLE)h->stdin_w); /* stdin EOF ends the server */
    if (h->process) {
        if (WaitForSingleObject((HANDLE)h->process, (DWORD)tscale(3000)) != WAIT_OBJECT_0) {
            TerminateProcess((HANDLE)h->process, 1);
            WaitForSingleObject((HANDLE)h->process, INFINITE);
        }
        CloseHandle((HANDLE)h->process);
    }
    h->stdin_w = h->process = NULL;
    if (h->record[0])
        remove(h->record);
}
#endif
