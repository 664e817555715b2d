import Foundation
import PushBridgeJSON

/// Finds fixture files: every `*.json` under the given files and folders, sorted.
///
/// Service fixtures (a folder named `service`, Specification §12) drive a running service over HTTP; a walk
/// of a parent folder leaves them out, and naming the folder itself (or a file in it) takes them.
public enum FixtureDiscovery {
    /// The folder name of service fixtures.
    public static let serviceFolder = "service"

    /// - Parameter paths: files or folders.
    /// - Returns: fixture file paths in a stable order (folders expanded recursively, sorted).
    /// - Throws: `InputError` with code `InputError.Code.unreadableFile` for a path that does not exist.
    public static func files(in paths: [String]) throws -> [String] {
        var out: [String] = []
        let fm = FileManager.default
        for path in paths {
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw InputError(.unreadableFile, at: .root, expected: "an existing fixture file or folder", found: "no such path", file: path)
            }
            if !isDirectory.boolValue {
                out.append(path)
                continue
            }
            guard let enumerator = fm.enumerator(atPath: path) else { continue }
            var found: [String] = []
            for case let relative as String in enumerator where relative.hasSuffix(".json") {
                if relative.split(separator: "/").dropLast().contains(Substring(serviceFolder)) { continue }
                found.append(path.hasSuffix("/") ? path + relative : path + "/" + relative)
            }
            out.append(contentsOf: found.sorted())
        }
        return out
    }

    /// Reads a file's bytes.
    /// - Throws: `InputError` saying "no such file", "a directory" or "a file that cannot be read".
    public static func read(_ path: String) throws -> [UInt8] {
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
        guard exists, !isDirectory.boolValue, let data = FileManager.default.contents(atPath: path) else {
            let found = !exists ? "no such file" : isDirectory.boolValue ? "a directory" : "a file that cannot be read"
            throw InputError(.unreadableFile, at: .root, expected: "a readable file", found: found, file: path)
        }
        return [UInt8](data)
    }
}
