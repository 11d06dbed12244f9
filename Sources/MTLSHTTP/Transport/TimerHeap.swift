/// A min-heap of wait deadlines: the event loop's timers.
struct TimerHeap {
    struct Entry {
        var deadline: Deadline
        var fd: Int32
        var id: UInt64
    }
    private var entries: [Entry] = []

    var first: Entry? { entries.first }
    var count: Int { entries.count }

    mutating func push(_ entry: Entry) {
        entries.append(entry)
        siftUp(entries.count - 1)
    }

    mutating func pop() {
        guard !entries.isEmpty else { return }
        entries.swapAt(0, entries.count - 1)
        entries.removeLast()
        siftDown(0)
    }

    /// Removes every entry, keeping the storage.
    mutating func removeAll() { entries.removeAll(keepingCapacity: true) }

    /// Keeps the entries `live` accepts.
    mutating func keep(_ live: (Entry) -> Bool) {
        entries = entries.filter(live)
        for index in stride(from: entries.count / 2, through: 0, by: -1) { siftDown(index) }
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].deadline < entries[parent].deadline else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < entries.count, entries[left].deadline < entries[smallest].deadline { smallest = left }
            if right < entries.count, entries[right].deadline < entries[smallest].deadline { smallest = right }
            if smallest == parent { return }
            entries.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
