import Foundation
import PushBridgeDelivery
import PushBridgeDialects
import Yams

extension ServiceConfiguration.Delivery {
    /// The keys one credential entry may have.
    static let credentialKeys = ["topics", "key-file", "key-id", "team-id", "certificate-file", "private-key-file", "p12-file", "p12-password-file"]

    /// Reads the credentials file (a YAML list, one entry per credential) and every file it names;
    /// relative paths are relative to the credentials file.
    ///
    /// ```yaml
    /// - topics: [com.example.chat]        # bundle ids (apns-topic); "*" = every other topic
    ///   key-file: AuthKey_ABC123DEFG.p8   # token auth
    ///   key-id: ABC123DEFG
    ///   team-id: DEF123GHIJ
    /// - topics: [com.example.legacy]
    ///   certificate-file: push.pem        # certificate auth, PEM (key in private-key-file or the same file)
    /// - topics: [com.example.old]
    ///   p12-file: push.p12                # or a .p12 and the file holding its password
    ///   p12-password-file: push.p12.password
    /// ```
    /// - Throws: ``ConfigurationError`` naming the file and entry, never a secret's content.
    public func loadCredentials() throws -> [APNsCredential] {
        let file = credentialsFile
        guard let data = FileManager.default.contents(atPath: file) else {
            throw ConfigurationError(source: file, key: "(file)", expected: "a readable YAML credentials file", found: "no such file")
        }
        let node: Node?
        do {
            node = try Yams.compose(yaml: String(decoding: data, as: UTF8.self))
        } catch {
            throw ConfigurationError(source: file, key: "(file)", expected: "YAML", found: nil)
        }
        guard let entries = node?.sequence, !entries.isEmpty else {
            throw ConfigurationError(source: file, key: "(file)", expected: "a list of credentials (- topics: [...], key-file: ...)", found: nil)
        }
        let directory = (file as NSString).deletingLastPathComponent
        func path(_ text: String) -> String { text.hasPrefix("/") || directory.isEmpty ? text : directory + "/" + text }
        var out: [APNsCredential] = []
        var claimed: [String: Int] = [:]
        for (index, entry) in entries.enumerated() {
            let at = "[\(index)]"
            guard let mapping = entry.mapping else { throw ConfigurationError(source: file, key: at, expected: "a mapping", found: "a \(entry.kindName)") }
            var fields: [String: String] = [:]
            var topics: [String] = []
            for (keyNode, valueNode) in mapping {
                let key = keyNode.scalar?.string ?? ""
                guard Self.credentialKeys.contains(key) else {
                    let hint = DialectRegistry.suggestion(for: key, among: Self.credentialKeys).map { " (did you mean \($0)?)" } ?? ""
                    throw ConfigurationError(source: file, key: "\(at).\(key)", expected: "a known key\(hint)", found: nil)
                }
                if key == "topics" {
                    topics = valueNode.sequence?.compactMap { $0.scalar?.string } ?? valueNode.scalar.map { [$0.string] } ?? []
                    guard !topics.isEmpty, topics.allSatisfy({ !$0.isEmpty }) else {
                        throw ConfigurationError(source: file, key: "\(at).topics", expected: "a list of bundle ids, or [\"*\"]", found: nil)
                    }
                } else {
                    guard let scalar = valueNode.scalar?.string, !scalar.isEmpty else {
                        throw ConfigurationError(source: file, key: "\(at).\(key)", expected: "a single non-empty value", found: nil)
                    }
                    fields[key] = scalar
                }
            }
            if topics.isEmpty { throw ConfigurationError(source: file, key: "\(at).topics", expected: "the bundle ids it serves", found: "none") }
            for topic in topics {
                if let other = claimed[topic] {
                    throw ConfigurationError(source: file, key: "\(at).topics", expected: "topics no other credential serves", found: "\"\(topic)\", also in [\(other)]")
                }
                claimed[topic] = index
            }
            let kinds = [fields["key-file"] != nil, fields["certificate-file"] != nil, fields["p12-file"] != nil].filter { $0 }.count
            guard kinds == 1 else {
                throw ConfigurationError(source: file, key: at, expected: "exactly one of key-file (token auth), certificate-file or p12-file", found: nil)
            }
            let source: APNsCredential.Source
            if let keyFile = fields["key-file"] {
                guard let keyID = fields["key-id"], let teamID = fields["team-id"] else {
                    throw ConfigurationError(source: file, key: at, expected: "key-id and team-id with key-file", found: nil)
                }
                source = .token(keyFile: path(keyFile), keyID: keyID, teamID: teamID)
            } else if let certificate = fields["certificate-file"] {
                source = .certificate(certificateFile: path(certificate), privateKeyFile: fields["private-key-file"].map(path))
            } else {
                source = .pkcs12(file: path(fields["p12-file"]!), passwordFile: fields["p12-password-file"].map(path))
            }
            do {
                out.append(try APNsCredential(topics: topics, source: source))
            } catch let error as DeliveryError {
                throw ConfigurationError(source: file, key: at, expected: "\(error.subject): \(error.expected)", found: nil)
            }
        }
        return out
    }
}
