import Foundation
import PushBridgeConformance
#if canImport(Glibc)
import Glibc
#endif

package enum ScenarioDecisionText {
    package static let mutableContent = """
        {"push":true,"payload":{"aps":{"alert":{"body":"you got a new message"},"badge":1,"sound":"default","mutable-content":1},\
        "f":"6001","m":"373360335316321408","t":"6006"},"deliveries":[{"device":{"token":\
        "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90","environment":"development"},"headers":\
        {"apns-push-type":"alert","apns-priority":"10","apns-topic":"com.easemob.chatdemoui"}}]}
        """
}

/// A fresh database path in the temporary folder.
package func temporaryDatabase() -> String {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-db-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir.appendingPathComponent("state.db").path
}

/// A new empty directory under the temporary directory.
package func temporaryDirectory() -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-service-\(UUID().uuidString)").path
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
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
