import Foundation
import PushBridgeCore
import PushBridgeJSON

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The implementation under test failed to give a decision: it crashed, timed out, exited
/// non-zero or could not be reached. The fixture fails with this reason; the harness goes on.
public struct ImplementationFailure: Error, Hashable, Sendable, CustomStringConvertible {
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

extension Fixture {
    /// Runs `body` with a path to a temporary file holding what an implementation under test is
    /// given (``bytes(profile:)``: the scenario without its answer). The fixture's own file is never
    /// passed: it holds `expect`.
    public func withFile<T>(profile: Profile?, _ body: (String) async throws -> T) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-against-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent(URL(fileURLWithPath: path).lastPathComponent).path
        guard FileManager.default.createFile(atPath: file, contents: Data(bytes(profile: profile))) else {
            throw ImplementationFailure("could not write the temporary fixture \(file)")
        }
        return try await body(file)
    }

    /// The keys of a fixture that reveal its answer, removed from what an implementation is given.
    public static let answerKeys = ["expect"]

    /// The scenario document as an implementation under test gets it: without `expect` (the
    /// answer), and with `profile` set when one is asked for.
    public func document(profile: Profile?) -> JSONValue {
        guard case .object(var object) = document else { return document }
        for key in Self.answerKeys { object[key] = nil }
        if let profile { object["profile"] = .string(profile.id) }
        return .object(object)
    }

    /// ``document(profile:)`` as compact JSON bytes: what an implementation under test is given.
    public func bytes(profile: Profile?) -> [UInt8] {
        var writer = JSONWriter()
        writer.write(document(profile: profile))
        return writer.bytes
    }
}

/// An implementation under test run as a command: `CMD FILE` through `/bin/sh -c`, once per
/// fixture (and per profile of an equivalence fixture), with a deadline. Whatever it prints on
/// standard output is the decision JSON.
public struct CommandDecisionProvider: DecisionProvider {
    public let command: String
    /// Seconds per run before the command (and everything it started) is killed.
    public let timeout: Double

    /// - Parameters:
    ///   - command: a shell command; the fixture path is appended as its last argument.
    ///   - timeout: seconds per fixture (10 by default).
    public init(command: String, timeout: Double = 10) {
        self.command = command
        self.timeout = timeout
    }

    public func decision(for fixture: Fixture, profile: Profile?) async throws -> [UInt8] {
        try await fixture.withFile(profile: profile) { file in
            let outcome: ChildProcess.Outcome
            do {
                // On a thread of its own: the child and its pipes are waited for there, not on the caller's.
                outcome = try await ChildProcess.awaited(["/bin/sh", "-c", command + " \"$1\"", "pushbridge-against", file], timeout: timeout)
            } catch {
                throw ImplementationFailure("`\(command)` could not be started: \(error)")
            }
            let stderr = String(decoding: outcome.stderr, as: UTF8.self).split(separator: "\n").first.map { ": " + $0 } ?? ""
            if outcome.timedOut { throw ImplementationFailure("`\(command)` timed out after \(Self.seconds(timeout)) s") }
            if let signal = outcome.signal { throw ImplementationFailure("`\(command)` crashed (signal \(signal))\(stderr)") }
            if let status = outcome.status, status > 128, status < 160 {  // the shell reports a child killed by signal N as 128 + N
                throw ImplementationFailure("`\(command)` crashed (signal \(status - 128))\(stderr)")
            }
            if let status = outcome.status, status != 0 { throw ImplementationFailure("`\(command)` exited with status \(status)\(stderr)") }
            return outcome.stdout
        }
    }

    /// A command prints decisions only: `expect.queries` are not judged.
    public func queryResults(for fixture: Fixture) throws -> [JSONValue]? { nil }

    /// Checks, before a run, that the command's program exists and can be executed (a path, a
    /// program on `PATH` or a shell builtin), so a typo stops at once instead of failing every fixture.
    /// - Throws: ``ImplementationFailure`` naming the program.
    public func checkRunnable() throws {
        guard let program = Self.program(of: command) else { throw ImplementationFailure("the command is empty") }
        if program.contains("/") {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: program, isDirectory: &isDirectory) else {
                throw ImplementationFailure("no such file: \(program)")
            }
            guard !isDirectory.boolValue, FileManager.default.isExecutableFile(atPath: program) else {
                throw ImplementationFailure("\(program) is \(isDirectory.boolValue ? "a directory" : "not executable")")
            }
            return
        }
        let found = try? ChildProcess.run(["/bin/sh", "-c", "command -v \"$1\"", "pushbridge-check", program], timeout: 5)
        guard found?.status == 0 else { throw ImplementationFailure("command not found: \(program)") }
    }

    /// The first word of a shell command: the program it runs (quotes removed); `nil` when empty.
    static func program(of command: String) -> String? {
        let text = command.drop { $0 == " " || $0 == "\t" }
        guard let first = text.first else { return nil }
        if first == "\"" || first == "'" {
            let rest = text.dropFirst()
            return String(rest.prefix { $0 != first })
        }
        return String(text.prefix { $0 != " " && $0 != "\t" })
    }

    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

/// An implementation under test behind HTTP: each fixture is POSTed as JSON (with `profile` set
/// when a profile is asked for) and the response body is the decision JSON.
public struct HTTPDecisionProvider: DecisionProvider {
    public let url: URL
    /// Seconds per request.
    public let timeout: Double

    /// - Parameters:
    ///   - url: an `http://` or `https://` URL.
    ///   - timeout: seconds per fixture (10 by default).
    public init(url: URL, timeout: Double = 10) {
        self.url = url
        self.timeout = timeout
    }

    public func decision(for fixture: Fixture, profile: Profile?) async throws -> [UInt8] {
        try await post(fixture.bytes(profile: profile))  // the scenario without its answer
    }

    /// Checks, before a run, that something accepts TCP connections at the URL's host and port.
    /// - Throws: ``ImplementationFailure`` naming the address.
    public func checkReachable() throws {
        guard let host = url.host else { throw ImplementationFailure("\(url) has no host") }
        let port = url.port ?? (url.scheme == "https" ? 443 : 80)
        guard Self.accepts(host: host, port: port, timeout: min(timeout, 5)) else {
            throw ImplementationFailure("nothing answers at \(host):\(port) (\(url.absoluteString))")
        }
    }

    /// Whether a TCP connection to host:port opens within the timeout.
    static func accepts(host: String, port: Int, timeout: Double) -> Bool {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else { return false }
        defer { freeaddrinfo(list) }
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            defer { entry = info.pointee.ai_next }
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            if connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return true }
            guard errno == EINPROGRESS else { continue }
            var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            guard poll(&poller, 1, Int32(timeout * 1000)) == 1 else { continue }
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            if getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0 { return true }
        }
        return false
    }

    func post(_ bytes: [UInt8]) async throws -> [UInt8] {
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.httpBody = Data(bytes)
        let answer: (data: Data, status: Int?)?
        do {
            // `timeoutInterval` bounds each wait for a byte; this bounds the whole exchange.
            answer = try await Self.within(seconds: timeout + 1) { [request] in try await Self.send(request) }
        } catch {
            throw ImplementationFailure("POST \(url.absoluteString) failed: \(error.localizedDescription)")
        }
        guard let answer else { throw ImplementationFailure("POST \(url.absoluteString) timed out after \(CommandDecisionProvider.seconds(timeout)) s") }
        let text = [UInt8](answer.data)
        guard let status = answer.status, (200..<300).contains(status) else {
            let first = String(decoding: text.prefix(200), as: UTF8.self).split(separator: "\n").first.map { ": " + $0 } ?? ""
            throw ImplementationFailure("POST \(url.absoluteString) answered HTTP \(answer.status.map(String.init) ?? "?")\(first)")
        }
        return text
    }

    /// One URLSession exchange, awaited; cancelling the task cancels the request.
    static func send(_ request: URLRequest) async throws -> (data: Data, status: Int?) {
        let running = RunningRequest()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(data: Data, status: Int?), any Error>) in
                let task = URLSession.shared.dataTask(with: request) { data, response, error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else {
                        continuation.resume(returning: (data ?? Data(), (response as? HTTPURLResponse)?.statusCode))
                    }
                }
                running.start(task)
            }
        } onCancel: {
            running.cancel()
        }
    }

    /// `work`'s result, or `nil` when it has not finished within `seconds` (it is then cancelled).
    static func within<T: Sendable>(seconds: Double, _ work: @escaping @Sendable () async throws -> T) async throws -> T? {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await work() }
            group.addTask {
                try await Task.sleep(for: .milliseconds(Int64(seconds * 1000)))
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
    }

    /// An HTTP server answers decisions only: `expect.queries` are not judged.
    public func queryResults(for fixture: Fixture) throws -> [JSONValue]? { nil }
}

/// A URLSession task that may be cancelled before or after it starts.
final class RunningRequest: @unchecked Sendable {
    private let lock = NSLock()
    private var task: URLSessionDataTask?
    private var cancelled = false

    func start(_ task: URLSessionDataTask) {
        lock.lock()
        self.task = task
        let cancelled = cancelled
        lock.unlock()
        cancelled ? task.cancel() : task.resume()
    }

    func cancel() {
        lock.lock()
        cancelled = true
        let task = task
        lock.unlock()
        task?.cancel()
    }
}
