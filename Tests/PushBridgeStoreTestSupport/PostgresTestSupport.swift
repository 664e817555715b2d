import Foundation
import PushBridgeTestSupport
import PushBridgePostgres
import Synchronization
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

/// A location in the test cluster with the tests' deadline: 30 s a statement. The whole suite runs
/// at once on two cores in CI, where the one cluster every test shares has left statements
/// unanswered past the store's 5 s default (tens of stores at once, each making its schema); a test
/// that measures the deadline sets its own.
package func testPostgresLocation(_ url: String) throws -> PostgresLocation {
    var location = try PostgresLocation(url: url)
    location.deadline = .seconds(30)
    return location
}

/// A new empty schema in the test cluster's database, for one test (cheaper than a database), with
/// the tests' deadline.
package func freshPostgresSchema(_ url: String) throws -> PostgresLocation {
    try testPostgresLocation(url).inSchema("t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(20))
}

/// The schemas one test makes, dropped together when it is done (a full run makes hundreds: kept,
/// they would hold hundreds of megabytes of disk until the cluster is removed).
package final class PostgresSchemas: Sendable {
    private let url: String
    private let made = Mutex<[String]>([])

    package init(_ url: String) { self.url = url }

    /// A new empty schema, remembered for `dropAll()`.
    package func fresh() throws -> PostgresLocation {
        let location = try freshPostgresSchema(url)
        if let schema = location.schema { made.withLock { $0.append(schema) } }
        return location
    }

    /// Drops every schema `fresh()` made (stores on them must be done with).
    package func dropAll() throws {
        let names = made.withLock { names in defer { names = [] }; return names }
        if names.isEmpty { return }
        let run = try runProgram("/usr/bin/env", ["psql", "-q", "-v", "ON_ERROR_STOP=1", url, "-c", "DROP SCHEMA \(names.joined(separator: ", ")) CASCADE"])
        guard run.status == 0 else { throw PostgresTestFailure(message: "DROP SCHEMA failed: \(run.stderr)") }
    }
}

/// A new empty database in the test cluster, for one test; returns its location. `psql` runs on a
/// thread of its own, not the concurrency pool the in-process services need.
/// - Parameter url: the test cluster's URL.
package func freshPostgresDatabase(_ url: String) async throws -> PostgresLocation {
    try await onAThreadOfItsOwn { try createPostgresDatabase(url) }
}

private func createPostgresDatabase(_ url: String) throws -> PostgresLocation {
    var location = try testPostgresLocation(url)
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

