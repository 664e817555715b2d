/// The SQL of a push task's page of receivers (SQLite's and PostgreSQL's): one table drives — the
/// first label of `all`, else the first attribute value, else the labels of `any`, else the values of
/// `anyAttributes` — and every other condition is an `EXISTS`; receivers come in code-point order
/// after the cursor, each with its first time in a label (0 when a label is not what drives).
package struct AudienceQuery {
    /// The text parameters, in the order of their placeholders.
    package private(set) var texts: [String] = []
    private var from = ""
    private var conditions: [String] = []
    private var time = "CAST(0 AS BIGINT)"
    private var grouped = false
    private let placeholder: (Int) -> String

    /// - Parameters:
    ///   - audience: whom the task pushes to (not every user).
    ///   - app: the placeholder of the app's key, where apps share the tables (`nil`: they do not).
    ///   - placeholder: the placeholder of the n-th text parameter (from 1).
    package init(_ audience: TaskAudience, app: String? = nil, placeholder: @escaping (Int) -> String) {
        self.placeholder = placeholder
        let sameApp = app == nil ? "" : " AND b.app = a.app"
        var all = audience.all
        var values = audience.attributes
        var any = audience.any
        var anyValues = audience.anyAttributes
        if !all.isEmpty {
            from = "push_label_users a WHERE a.label = \(text(all.removeFirst()))"
            time = "a.added_at"
        } else if !values.isEmpty {
            let first = values.removeFirst()
            from = "user_attributes a WHERE a.name = \(text(first.name)) AND a.value = \(text(first.value))"
        } else if !any.isEmpty {
            from = "push_label_users a WHERE a.label IN (\(any.map { text($0) }.joined(separator: ", ")))"
            time = "min(a.added_at)"
            grouped = true
            any = []
        } else {
            from = "user_attributes a WHERE (\(anyValues.map { "a.name = \(text($0.name)) AND a.value = \(text($0.value))" }.joined(separator: " OR ")))"
            grouped = true
            anyValues = []
        }
        if let app { conditions.append("a.app = \(app)") }
        for label in all { conditions.append("EXISTS (SELECT 1 FROM push_label_users b WHERE b.label = \(text(label)) AND b.user_name = a.user_name\(sameApp))") }
        if !any.isEmpty {
            conditions.append(
                "EXISTS (SELECT 1 FROM push_label_users b WHERE b.label IN (\(any.map { text($0) }.joined(separator: ", "))) AND b.user_name = a.user_name\(sameApp))")
        }
        for value in values {
            conditions.append(
                "EXISTS (SELECT 1 FROM user_attributes b WHERE b.name = \(text(value.name)) AND b.value = \(text(value.value)) AND b.user_name = a.user_name\(sameApp))")
        }
        if !anyValues.isEmpty {
            let one = anyValues.map { "b.name = \(text($0.name)) AND b.value = \(text($0.value))" }.joined(separator: " OR ")
            conditions.append("EXISTS (SELECT 1 FROM user_attributes b WHERE (\(one)) AND b.user_name = a.user_name\(sameApp))")
        }
    }

    /// The statement: user name and time of each receiver.
    /// - Parameters:
    ///   - cursor: the placeholder of the last receiver read ("" for none).
    ///   - limit: the placeholder of the page's size.
    package func sql(cursor: String, limit: String) -> String {
        let rest = conditions.map { " AND " + $0 }.joined()
        return "SELECT a.user_name, \(time) FROM \(from) AND a.user_name > \(cursor)\(rest)\(grouped ? " GROUP BY a.user_name" : "") ORDER BY a.user_name LIMIT \(limit)"
    }

    private mutating func text(_ value: String) -> String {
        texts.append(value)
        return placeholder(texts.count)
    }
}
