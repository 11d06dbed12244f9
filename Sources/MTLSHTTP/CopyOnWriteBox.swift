/// A value kept in one heap box that copies share until one of them writes (then it copies the
/// box first): a value type to its users, 8 bytes wherever it is stored. `HTTPSError` and
/// `TLSSessionReport` keep their fields in one, because every `try await` of a
/// `throws(HTTPSError)` function reserves room for an error in its caller's async frame, and a
/// thousand exchanges in flight hold those frames (docs/BENCHMARKS.md, "The fleet's memory, before
/// and after").
struct CopyOnWriteBox<Value> {
    private final class Storage {
        var value: Value
        init(_ value: Value) { self.value = value }
    }

    private var storage: Storage

    init(_ value: Value) { storage = Storage(value) }

    var value: Value {
        get { storage.value }
        _modify {
            if !isKnownUniquelyReferenced(&storage) { storage = Storage(storage.value) }
            yield &storage.value
        }
    }
}

// A shared box is never written (`value`'s _modify copies it first), so a box reached from two
// tasks is only read.
extension CopyOnWriteBox: @unchecked Sendable where Value: Sendable {}
