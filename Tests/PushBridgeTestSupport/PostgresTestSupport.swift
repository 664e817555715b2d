import Foundation
import PushBridgeConformance
import PushBridgePostgres
import Testing

/// The test cluster `Tests/Scripts/with-postgres.sh` started (`make test` runs the suite under it),
/// or nil: then the test says it was skipped, and under `CI=true` it fails instead.
package func testPostgresURL() -> String? {
    if let url = ProcessInfo.processInfo.environment["PUSHBRIDGE_TEST_POSTGRES_URL"], !url.isEmpty { return url }
    if ProcessInfo.processInfo.environment["CI"] == "true" {
        Issue.record("PUSHBRIDGE_TEST_POSTGRES_URL is not set under CI: run the tests through make test (Tests/Scripts/with-postgres.sh)")
    } else {
        print("SKIPPED (no PostgreSQL): set PUSHBRIDGE_TEST_POSTGRES_URL or run through make test / Tests/Scripts/with-postgres.sh")
    }
    return nil
}

/// A new empty schema in the test cluster's database, for one test (cheaper than a database).
package func freshPostgresSchema(_ url: String) throws -> PostgresLocation {
    try PostgresLocation(url: url).inSchema("t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(20))
}

/// A new empty database in the test cluster, for one test; returns its location.
package func freshPostgresDatabase(_ url: String) throws -> PostgresLocation {
    var location = try PostgresLocation(url: url)
    let name = "pb_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
    let run = try runProgram("/usr/bin/env", ["psql", "-q", "-v", "ON_ERROR_STOP=1", url, "-c", "CREATE DATABASE \(name)"])
    guard run.status == 0 else { throw PostgresTestFailure(message: "CREATE DATABASE failed: \(run.stderr)") }
    location.database = String(name)
    return location
}

package struct PostgresTestFailure: Error, CustomStringConvertible {
    package var message: String
    package var description: String { message }
}

/// Starts a program with its standard input from `/dev/null` and its output appended to a file,
/// waits for it with `waitpid`, and returns its exit status. The child inherits no other descriptor
/// (``InheritedDescriptors``): `pg_ctl start` leaves a server running that would hold them.
package func spawnAndWait(_ command: [String], output: String) throws -> Int32 {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o666)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    InheritedDescriptors.closeAll(in: &actions)
    let arguments = command.map { strdup($0) } + [nil]
    defer { arguments.forEach { free($0) } }
    var pid = pid_t()
    let spawned = posix_spawn(&pid, command[0], &actions, nil, arguments, environ)
    guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EIO) }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
}
