import PushBridgeCore
import PushBridgeJSON

extension PushFacade {
    /// Text a store keeps as text (a display name, a sound, a language, a name card, a template or
    /// certificate field) holds no NUL: PostgreSQL refuses one in `text`, and C strings end at one.
    /// Every other character is kept (it is escaped where it is written out). Ids have the stricter
    /// ``IdentifierRule``; message content is not kept as text and may hold anything.
    /// - Parameters:
    ///   - state: a user's state about to be saved.
    ///   - pointer: the call that changed it, for the error.
    static func checkStoredText(of state: UserState, at pointer: JSONPointer) throws {
        var fields: [(String, String?)] = [
            ("displayName", state.displayName), ("language", state.language), ("oneToOneSound", state.oneToOneSound), ("groupSound", state.groupSound),
        ]
        for (group, card) in state.nameCards { fields.append(("name card of \(group)", card)) }
        try checkNoNUL(fields, at: pointer)
    }

    /// ``checkStoredText(of:at:)`` for an app's certificates and templates.
    static func checkStoredText(of app: AppConfiguration) throws {
        var fields: [(String, String?)] = []
        for (i, certificate) in app.certificates.enumerated() {
            fields += [("certificates/\(i)/name", certificate.name), ("certificates/\(i)/busiId", certificate.busiId), ("certificates/\(i)/bundleId", certificate.bundleId)]
        }
        for (i, template) in app.templates.enumerated() {
            fields += [("templates/\(i)/name", template.name), ("templates/\(i)/titlePattern", template.titlePattern), ("templates/\(i)/contentPattern", template.contentPattern)]
        }
        try checkNoNUL(fields, at: .root)
    }

    private static func checkNoNUL(_ fields: [(String, String?)], at pointer: JSONPointer) throws {
        for (field, text) in fields where text?.utf8.contains(0) == true {
            throw InputError(.invalidValue, at: pointer, expected: "\(field) without a NUL (U+0000): a store keeps it as text", found: "a NUL (U+0000)")
        }
    }
}
