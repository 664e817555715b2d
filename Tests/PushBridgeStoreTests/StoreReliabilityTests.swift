import Foundation
import PushBridgeCore
import PushBridgeDialects
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeStore
import PushBridgeTestSupport
import PushBridgeStoreTestSupport
import Testing

/// The store under real processes: SIGKILL mid-write, two writers at once, a 10,000-member group.
@Suite("Store reliability", .serialized)
struct StoreReliabilityTests {
    @Test("kill -9 mid-apply: every acknowledged call is there, the database is intact")
    func killNineKeepsAcknowledgedCalls() async throws {
        let (db, folder) = try ReliabilityScenario.prepareDatabase()
        let calls = ReliabilityScenario.calls(10_000, tag: "k")
        let file = folder + "/calls.json"
        try ("[" + calls.joined(separator: ",\n") + "]").write(toFile: file, atomically: true, encoding: .utf8)
        let killAfter = Int.random(in: 200..<9_000)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: Repository.executable)
        process.arguments = ["apply", "--db", db, "--dialect", "agora-silent", "--user", "k", "--now", ReliabilityScenario.now, file]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        var received: [UInt8] = []
        var lines = 0
        var killed = false
        while true {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            received += chunk
            lines += chunk.reduce(0) { $0 + ($1 == 10 ? 1 : 0) }
            if !killed && lines >= killAfter {
                kill(process.processIdentifier, SIGKILL)
                killed = true
            }
        }
        process.waitUntilExit()
        #expect(killed, "the child finished before the kill point \(killAfter)")
        #expect(process.terminationReason == .uncaughtSignal)

        // Only whole lines are acknowledgements; each names its call, counted from 1, in order.
        let acknowledged = String(decoding: received, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        for (i, line) in acknowledged.enumerated() {
            #expect(line.hasPrefix("{\"applied\":\(i + 1),"), "acknowledgement \(i + 1): \(line)")
        }
        let acked = acknowledged.count
        #expect(acked >= killAfter && acked < 10_000, "killed after \(killAfter), \(acked) acknowledged")

        #expect(try sqlite(db, "PRAGMA integrity_check") == ["ok"])
        #expect(try sqlite(db, "PRAGMA foreign_key_check") == [])
        let stored = try #require(try await PushFacade(store: try SQLiteStateStore(path: db)).user("k")).state
        // At most one call can have committed without its acknowledgement being read.
        let candidates = await [try ReliabilityScenario.expectedState(after: calls.prefix(acked), user: "k"), try ReliabilityScenario.expectedState(after: calls.prefix(acked + 1), user: "k")]
        #expect(candidates.contains(stored), "killed after \(killAfter) acknowledgements (\(acked) read): the stored state is no prefix of ≥ \(acked) calls")
    }

    @Test("kill -9 during group sends: each acknowledged send's counters are kept, all of a send or none")
    func killNineKeepsGroupCounters() async throws {
        let (db, folder) = try ReliabilityScenario.prepareDatabase()
        let store = try SQLiteStateStore(path: db)
        let certificate = try await PushFacade(store: store).app().certificates[0]
        let members = (0..<200).map { "g-\($0)" }
        try store.write { transaction in
            for (i, member) in members.enumerated() {
                var state = UserState(user: member, displayStyle: .messageSummary, backgroundGraceSeconds: 120)
                state.devices = [Device(token: String(format: "%064x", i + 1), certificate: certificate)]
                state.badge = i % 3
                try transaction.save(state, replacing: nil)
            }
        }
        try await PushFacade(store: store).setMembers(members, of: "big")
        let sends = 60
        for i in 1...sends {
            try #"{"id":"k\#(i)","conversationId":"big","from":"g-0","to":"big","chatType":"GroupChat","body":{"type":"text","text":"hi"}}"#
                .write(toFile: folder + "/msg-\(i).json", atomically: true, encoding: .utf8)
        }
        // One `pushbridge send` process after another (199 pushed receivers each: the badge log);
        // a line is written after a send's process has exited with its decisions printed.
        let script = """
            for i in $(seq 1 \(sends)); do
              "$0" send --db "$1" --dialect agora-silent --now \(ReliabilityScenario.now) "$2/msg-$i.json" > /dev/null 2>&1 || exit 1
              echo "$i"
            done
            """
        let killAfter = Int.random(in: 3..<40)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", script, Repository.executable, db, folder]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        var lines = 0
        var killed = false
        while true {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            lines += chunk.reduce(0) { $0 + ($1 == 10 ? 1 : 0) }
            if !killed && lines >= killAfter {
                // The send in flight dies wherever it is (mid-transaction or not), and the loop with it.
                try Self.killEveryProcess(naming: db)
                killed = true
            }
        }
        process.waitUntilExit()
        #expect(killed, "the loop finished before the kill point \(killAfter)")
        #expect(lines >= killAfter && lines < sends, "killed after \(killAfter), \(lines) acknowledged")

        #expect(try sqlite(db, "PRAGMA integrity_check") == ["ok"])
        func counters() async throws -> [Int] {
            let facade = PushFacade(store: try SQLiteStateStore(path: db))
            var counted: [Int] = []
            for (i, member) in members.dropFirst().enumerated() { counted.append(try #require(try await facade.user(member)).state.badge - (i + 1) % 3) }
            return counted
        }
        // Every receiver counted the same sends: the acknowledged ones, and at most the one in flight.
        let counted = try await counters()
        #expect(Set(counted).count == 1, "receivers counted different numbers of sends: \(Set(counted).sorted())")
        #expect([lines, lines + 1].contains(counted[0]), "\(lines) sends acknowledged, \(counted[0]) counted")
        // Folded into the counters table, they stay the same.
        try SQLiteStateStore(path: db).foldBadgeLog()
        #expect(try sqlite(db, "SELECT count(*) FROM badge_log") == ["0"])
        await #expect(try counters() == counted)
    }

    /// SIGKILLs every process whose command line names `path` (the loop and its `pushbridge send`), again
    /// until none is left: a loop stopped just after forking leaves a child that one round would miss, and
    /// that child must not write while the test reads.
    /// - Parameter path: a path only the processes to kill have in their arguments.
    static func killEveryProcess(naming path: String) throws {
        let deadline = Date().addingTimeInterval(30)
        repeat {
            _ = try runProgram("/usr/bin/pkill", ["-KILL", "-f", path])
            // pgrep exits 1 when nothing matches.
            if try runProgram("/usr/bin/pgrep", ["-f", path]).status == 1 { return }
            usleep(20_000)
        } while Date() < deadline
        Issue.record("processes naming \(path) still ran 30 s after SIGKILL")
    }

    @Test("two writer processes at once lose nothing")
    func concurrentWritersLoseNothing() async throws {
        let (db, folder) = try ReliabilityScenario.prepareDatabase()
        var processes: [(Process, Pipe, user: String, calls: [String])] = []
        for user in ["writer-a", "writer-b"] {
            let calls = ReliabilityScenario.calls(1_500, tag: user)
            let file = folder + "/\(user).json"
            try ("[" + calls.joined(separator: ",\n") + "]").write(toFile: file, atomically: true, encoding: .utf8)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Repository.executable)
            process.arguments = ["apply", "--db", db, "--dialect", "agora-silent", "--user", user, "--now", ReliabilityScenario.now, file]
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            processes.append((process, out, user, calls))
        }
        for (process, _, _, _) in processes { try process.run() }
        for (process, out, user, calls) in processes {
            let lines = out.fileHandleForReading.readDataToEndOfFile().reduce(0) { $0 + ($1 == 10 ? 1 : 0) }
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(user)")
            #expect(lines == calls.count, "\(user) acknowledged \(lines) of \(calls.count)")
        }
        #expect(try sqlite(db, "PRAGMA integrity_check") == ["ok"])
        let facade = PushFacade(store: try SQLiteStateStore(path: db))
        for (_, _, user, calls) in processes {
            #expect(try await facade.user(user)?.state == (try ReliabilityScenario.expectedState(after: calls[...], user: user)), "\(user)")
        }
    }

    @Test("a 10,000-member group message prints 9,999 decisions in membership order")
    func tenThousandMembers() async throws {
        let (db, folder) = try ReliabilityScenario.prepareDatabase()
        let members = (0..<10_000).map { "member-\(($0 * 7_919) % 10_000)" }  // not sorted: the order is the membership order
        let store = try SQLiteStateStore(path: db)
        let certificate = try await PushFacade(store: store).app().certificates[0]
        try store.write { transaction in
            for (i, member) in members.enumerated() where i % 2 == 0 {
                var state = UserState(user: member, displayStyle: .messageSummary, backgroundGraceSeconds: 120)
                state.devices = [Device(token: String(format: "%064x", i), certificate: certificate)]  // one token per install
                state.badge = i % 5
                try transaction.save(state, replacing: nil)
            }
        }
        let set = try runTool(["members", "--db", db, "--group", "big", "--set"] + members)
        #expect(set.status == 0, "\(set.stderr)")
        let sender = members[1]
        let message = folder + "/message.json"
        try #"{"id":"m1","conversationId":"big","from":"\#(sender)","to":"big","chatType":"GroupChat","body":{"type":"text","text":"hello"}}"#
            .write(toFile: message, atomically: true, encoding: .utf8)
        let send = try runTool(["send", "--db", db, "--dialect", "agora-silent", "--now", ReliabilityScenario.now, message])
        #expect(send.status == 0, "\(send.stderr)")
        let lines = send.stdout.split(separator: "\n")
        #expect(lines.count == 9_999)
        let receivers = try lines.map { try JSONParser.parse(String($0))["receiver"]?.stringValue ?? "" }
        #expect(receivers == members.filter { $0 != sender })
        #expect(lines.filter { $0.contains("\"push\":true") }.count == 5_000)
        #expect(lines.filter { $0.contains("\"reason\":\"no-device\"") }.count == 4_999)
        // The badge counters were committed with the decisions.
        let after = PushFacade(store: try SQLiteStateStore(path: db))
        #expect(try await after.user(members[0])?.state.badge == 1)
        #expect(try await after.user(members[2])?.state.badge == 3)
    }
}
