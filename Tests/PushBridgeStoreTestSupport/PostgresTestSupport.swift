import Foundation
import PushBridgeTestSupport
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

