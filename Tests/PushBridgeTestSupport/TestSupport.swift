import Foundation
import PushBridgeConformance
import PushBridgeJSON

/// Paths of the repository, found from this source file.
package enum Repository {
    package static let root: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    package static var fixtures: String { root.appendingPathComponent("Fixtures").path }
    package static var mappings: String { root.appendingPathComponent("Mappings").path }

    /// Every fixture file, relative to the repository root (stable test-case names).
    package static func fixtureFiles(under folder: String = "") -> [String] {
        let base = root.appendingPathComponent("Fixtures").appendingPathComponent(folder).path
        return ((try? FixtureDiscovery.files(in: [base])) ?? []).map { String($0.dropFirst(root.path.count + 1)) }
    }

    /// The built `pushbridge` executable next to the test bundle.
    package static var executable: String {
        let fm = FileManager.default
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var candidates = [runner.deletingLastPathComponent().appendingPathComponent("pushbridge").path]
        var dir = runner.deletingLastPathComponent()
        for _ in 0..<4 {  // inside a .xctest bundle on other platforms
            dir = dir.deletingLastPathComponent()
            candidates.append(dir.appendingPathComponent("pushbridge").path)
        }
        candidates.append(root.appendingPathComponent(".build/debug/pushbridge").path)
        return candidates.first { fm.isExecutableFile(atPath: $0) } ?? candidates.last!
    }
}

/// The result of running the command-line tool.
package struct ToolRun {
    package var status: Int32
    package var stdout: String
    package var stderr: String

    package init(status: Int32, stdout: String, stderr: String) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
    }
}

/// Runs `pushbridge` with arguments from the repository root.
/// - Parameters:
///   - arguments: the arguments.
///   - directory: the working directory (the repository root by default).
///   - environment: the whole environment, when not this process's.
package func runTool(_ arguments: [String], in directory: String? = nil, environment: [String: String]? = nil) throws -> ToolRun {
    try runProgram(Repository.executable, arguments, in: directory, environment: environment)
}

/// Runs a program and waits for it, both pipes drained at once (a chatty stderr cannot block the child).
package func runProgram(_ program: String, _ arguments: [String], in directory: String? = nil, environment: [String: String]? = nil) throws -> ToolRun {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: program)
    process.arguments = arguments
    process.currentDirectoryURL = directory.map { URL(fileURLWithPath: $0) } ?? Repository.root
    if let environment { process.environment = environment }
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let errBox = DataBox()
    let group = DispatchGroup()
    group.enter()
    Thread {  // not on Dispatch's global queues: it blocks for as long as the program runs
        errBox.data = err.fileHandleForReading.readDataToEndOfFile()
        group.leave()
    }.start()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    process.waitUntilExit()
    return ToolRun(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: errBox.data, as: UTF8.self))
}

/// Bytes read on another thread (handed over after a DispatchGroup wait).
package final class DataBox: @unchecked Sendable {
    package var data = Data()
}

/// Writes a scenario document to a temporary file and returns its path.
package func temporaryFile(_ text: String, name: String = "scenario.json") throws -> String {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    let url = dir.appendingPathComponent(name)
    try Data(text.utf8).write(to: url)
    return url.path
}

/// A fixture document read from the repository.
package func fixtureDocument(_ relativePath: String) throws -> JSONValue {
    try JSONParser.parse(FixtureDiscovery.read(Repository.root.appendingPathComponent(relativePath).path))
}

extension JSONValue {
    /// A copy with the value at `pointer` replaced (`nil` removes it); intermediate objects must exist.
    package func setting(_ pointer: String, to newValue: JSONValue?) -> JSONValue {
        guard let p = JSONPointer(pointer) else { return self }
        return setting(tokens: p.tokens[...], to: newValue)
    }

    private func setting(tokens: ArraySlice<String>, to newValue: JSONValue?) -> JSONValue {
        guard let first = tokens.first else { return newValue ?? .null }
        switch self {
        case .object(var object):
            if tokens.count == 1 {
                object[first] = newValue
            } else {
                object[first] = (object[first] ?? .object(JSONObject())).setting(tokens: tokens.dropFirst(), to: newValue)
            }
            return .object(object)
        case .array(var array):
            guard let index = Int(first) else { return self }
            if index == array.count, tokens.count == 1, let newValue {
                array.append(newValue)
            } else if index < array.count {
                if tokens.count == 1, newValue == nil { array.remove(at: index) } else {
                    array[index] = array[index].setting(tokens: tokens.dropFirst(), to: newValue)
                }
            }
            return .array(array)
        default:
            return self
        }
    }
}

/// Runs blocking work (raw sockets, sleeps) on a thread of its own and awaits its result: never on
/// Dispatch's global queues, whose few threads (as many as the cores) the process under test needs.
/// - Parameter body: the blocking work.
package func onAThreadOfItsOwn<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// Runs blocking work that cannot fail on a thread of its own and awaits its result.
/// - Parameter body: the blocking work.
package func onAThreadOfItsOwn<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

/// At most `limit` holders at once, awaited: a waiter holds no thread.
package actor AsyncLimiter {
    private var free: Int
    private var waiters: [CheckedContinuation<Void, Never>] = []

    package init(_ limit: Int) { free = max(1, limit) }

    /// Waits for a place.
    package func acquire() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    /// Gives a place back (to the longest waiter, if any).
    package func release() {
        if waiters.isEmpty { free += 1 } else { waiters.removeFirst().resume() }
    }
}

extension AsyncLimiter {
    /// Runs `body` in a place, given back when it ends (also when it throws); `body` runs off the
    /// limiter, so places run at once.
    nonisolated package func withPlace<T>(_ body: () async throws -> T) async rethrows -> T {
        await acquire()
        do {
            let result = try await body()
            await release()
            return result
        } catch {
            await release()
            throw error
        }
    }
}
