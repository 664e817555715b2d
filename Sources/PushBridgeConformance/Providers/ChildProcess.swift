#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Runs a child process in its own process group with a deadline, collecting its output.
///
/// A child that outlives the deadline is killed with its whole group (a shell and what it
/// started), so a hanging implementation under test never hangs the harness.
package struct ChildProcess {
    package struct Outcome {
        /// The exit status, when the child exited.
        package var status: Int32?
        /// The signal that ended the child, when one did.
        package var signal: Int32?
        package var stdout: [UInt8]
        package var stderr: [UInt8]
        package var timedOut: Bool
    }

    /// Runs `arguments[0]` with `arguments` as its argv.
    /// - Parameters:
    ///   - arguments: the program path and its arguments.
    ///   - timeout: seconds before the group is killed.
    ///   - outputLimit: bytes kept per stream (the rest is read and dropped).
    package static func run(_ arguments: [String], timeout: Double, outputLimit: Int = 16 << 20) throws -> Outcome {
        try spawnAndCollect(arguments, timeout: timeout, outputLimit: outputLimit)
    }

    /// ``run(_:timeout:outputLimit:)`` on a thread of its own, awaited: the child and its pipes are
    /// waited for there, and the caller's task gives its thread back meanwhile.
    package static func awaited(_ arguments: [String], timeout: Double, outputLimit: Int = 16 << 20) async throws -> Outcome {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Outcome, any Error>) in
            Thread.detachNewThread { continuation.resume(with: Result { try spawnAndCollect(arguments, timeout: timeout, outputLimit: outputLimit) }) }
        }
    }

    private static func spawnAndCollect(_ arguments: [String], timeout: Double, outputLimit: Int) throws -> Outcome {
        var outPipe: [Int32] = [0, 0]
        var errPipe: [Int32] = [0, 0]
        guard pipe(&outPipe) == 0, pipe(&errPipe) == 0 else { throw ChildProcessError(reason: "pipe failed: errno \(errno)") }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        // The pipes' own ends and every other descriptor of this process (another child's pipe, a
        // server's sockets) are closed in the child.
        InheritedDescriptors.closeAll(in: &actions)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)

        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        let spawned = posix_spawn(&pid, arguments[0], &actions, &attributes, argv, environ)
        close(outPipe[1])
        close(errPipe[1])
        guard spawned == 0 else {
            close(outPipe[0])
            close(errPipe[0])
            throw ChildProcessError(reason: "could not start \(arguments[0]): \(String(cString: strerror(spawned)))")
        }

        var out: [UInt8] = []
        var err: [UInt8] = []
        var open: [Int32: Bool] = [outPipe[0]: true, errPipe[0]: true]
        let deadline = Date().addingTimeInterval(timeout)
        var timedOut = false
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while open.values.contains(true) {
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 {
                timedOut = true
                break
            }
            var fds = open.filter(\.value).map { pollfd(fd: $0.key, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), Int32(min(remaining * 1000, 1000)) + 1)
            if ready < 0 && errno != EINTR { break }
            for p in fds where p.revents != 0 {
                let n = read(p.fd, &buffer, buffer.count)
                if n <= 0 {
                    open[p.fd] = false
                    continue
                }
                if p.fd == outPipe[0] {
                    if out.count < outputLimit { out += buffer[0..<min(n, outputLimit - out.count)] }
                } else if err.count < outputLimit {
                    err += buffer[0..<min(n, outputLimit - err.count)]
                }
            }
        }
        if timedOut { kill(-pid, SIGKILL) }
        close(outPipe[0])
        close(errPipe[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        if !timedOut { kill(-pid, SIGKILL) }  // anything the child left behind in its group
        let exited = status & 0x7f == 0
        return Outcome(
            status: exited ? (status >> 8) & 0xff : nil, signal: exited ? nil : status & 0x7f, stdout: out, stderr: err, timedOut: timedOut)
    }
}

/// What a spawned child must not keep of its parent: every descriptor but its standard three.
///
/// `posix_spawn` hands a child every descriptor not marked close-on-exec, and NIO's accepted
/// sockets and `pipe()`'s ends are not. A child that outlives its parent's use of one keeps it open:
/// a server started by `pg_ctl start` held an HTTP connection the service had closed, so its client
/// saw no end of it until the server stopped; a provider's grandchild holding another run's pipe
/// would keep that run reading until its deadline.
package enum InheritedDescriptors {
    /// Adds to `actions` the closing of every descriptor from 3 up, after the actions added before
    /// it (so add it after the `dup2`s onto 0, 1 and 2).
    /// - Parameter actions: a spawn's file actions.
    package static func closeAll(in actions: inout posix_spawn_file_actions_t) {
        #if os(Linux)
        // glibc ≥ 2.34 has posix_spawn_file_actions_addclosefrom_np; Swift's Glibc module does not
        // declare it, so it is looked up by name.
        typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let program = dlopen(nil, RTLD_NOW), let symbol = dlsym(program, "posix_spawn_file_actions_addclosefrom_np") {
            if unsafeBitCast(symbol, to: AddCloseFrom.self)(&actions, 3) == 0 { return }
        }
        #endif
        // Elsewhere, the descriptors open now (one closed meanwhile is no error: POSIX ignores it).
        let listing = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? (try? FileManager.default.contentsOfDirectory(atPath: "/dev/fd")) ?? []
        for fd in listing.compactMap({ Int32($0) }) where fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }
    }
}

/// The harness could not run the implementation under test.
struct ChildProcessError: Error, CustomStringConvertible {
    var reason: String
    var description: String { reason }
}
