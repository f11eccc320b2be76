/// An ordered map kept in least-recently-used order, with O(1) lookup, insert, touch and
/// removal. Not thread-safe: its owners (`MemoryCache`, `DiskCache`) keep it inside a `Mutex`.
///
/// Nodes live in one array linked by indices rather than as separate class instances, so a
/// lookup costs one hash probe and no reference counting; freed slots are reused.
///
/// Its lookup, insert and removal are `@inlinable` (with `MemoryCache`'s), so a cache in
/// another module (the server's `InlineDataCache`) is specialized for its types: called
/// generically, a hit cost a memory-hit answer about a microsecond of metadata lookups
/// (docs/benchmarks.md, "Where a memory hit's time goes").
@usableFromInline
struct LRUList<Key: Hashable, Value> {
    @usableFromInline
    struct Node {
        @usableFromInline var key: Key
        @usableFromInline var value: Value?
        @usableFromInline var cost: Int
        @usableFromInline var prev: Int32
        @usableFromInline var next: Int32

        @inlinable
        init(key: Key, value: Value?, cost: Int, prev: Int32, next: Int32) {
            self.key = key
            self.value = value
            self.cost = cost
            self.prev = prev
            self.next = next
        }
    }

    @usableFromInline var nodes: [Node] = []
    @usableFromInline var slots: [Key: Int32] = [:]
    @usableFromInline var freeSlots: [Int32] = []
    /// Most recently used.
    @usableFromInline var head: Int32 = -1
    /// Least recently used.
    @usableFromInline var tail: Int32 = -1

    /// Sum of the costs of all entries.
    @usableFromInline var totalCost = 0

    @inlinable
    var count: Int { slots.count }

    @inlinable
    init(minimumCapacity: Int = 0) {
        slots.reserveCapacity(minimumCapacity)
        nodes.reserveCapacity(minimumCapacity)
    }

    /// The value for `key`, marking it most recently used.
    @inlinable
    mutating func touch(_ key: Key) -> Value? {
        guard let index = slots[key] else { return nil }
        moveToFront(index)
        return nodes[Int(index)].value
    }

    /// Lets `body` change the value for `key` in place and, when it returns true, marks the
    /// entry most recently used: one probe where peek, touch and update took three (a memory
    /// hit's path hand-out does this on every answer). nil when the key is absent.
    mutating func use(_ key: Key, _ body: (inout Value) -> Bool) -> Bool? {
        guard let index = slots[key] else { return nil }
        let used = body(&nodes[Int(index)].value!)
        if used { moveToFront(index) }
        return used
    }

    /// Whether `key` has an entry, without changing its place in the order.
    func contains(_ key: Key) -> Bool {
        slots[key] != nil
    }

    /// The value for `key` without changing its place in the order.
    func peek(_ key: Key) -> Value? {
        guard let index = slots[key] else { return nil }
        return nodes[Int(index)].value
    }

    /// Replaces the value of an existing entry in place (same cost, same place).
    mutating func update(_ key: Key, _ body: (inout Value) -> Void) {
        guard let index = slots[key] else { return }
        body(&nodes[Int(index)].value!)
    }

    /// Inserts or replaces `key` as the most recently used entry. Returns the old value.
    @discardableResult
    @inlinable
    mutating func insert(_ key: Key, _ value: Value, cost: Int) -> Value? {
        if let index = slots[key] {
            let old = nodes[Int(index)].value
            totalCost += cost - nodes[Int(index)].cost
            nodes[Int(index)].value = value
            nodes[Int(index)].cost = cost
            moveToFront(index)
            return old
        }
        let node = Node(key: key, value: value, cost: cost, prev: -1, next: head)
        let index: Int32
        if let free = freeSlots.popLast() {
            index = free
            nodes[Int(index)] = node
        } else {
            index = Int32(nodes.count)
            nodes.append(node)
        }
        if head >= 0 { nodes[Int(head)].prev = index }
        head = index
        if tail < 0 { tail = index }
        slots[key] = index
        totalCost += cost
        return nil
    }

    /// Inserts `key` as the least recently used entry (used when loading an index in
    /// most-recent-first order). The key must not be present.
    mutating func append(_ key: Key, _ value: Value, cost: Int) {
        precondition(slots[key] == nil)
        let index = Int32(nodes.count)
        nodes.append(Node(key: key, value: value, cost: cost, prev: tail, next: -1))
        if tail >= 0 { nodes[Int(tail)].next = index }
        tail = index
        if head < 0 { head = index }
        slots[key] = index
        totalCost += cost
    }

    /// Removes `key`, returning its value.
    @discardableResult
    @inlinable
    mutating func remove(_ key: Key) -> Value? {
        guard let index = slots.removeValue(forKey: key) else { return nil }
        return unlink(index)
    }

    /// Removes and returns the least recently used entry.
    @discardableResult
    @inlinable
    mutating func removeLeastRecent() -> (key: Key, value: Value, cost: Int)? {
        guard tail >= 0 else { return nil }
        let index = tail
        let key = nodes[Int(index)].key
        let cost = nodes[Int(index)].cost
        slots.removeValue(forKey: key)
        return (key, unlink(index)!, cost)
    }

    /// The least recently used entry, without removing it.
    var leastRecent: (key: Key, value: Value, cost: Int)? {
        guard tail >= 0 else { return nil }
        let node = nodes[Int(tail)]
        return (node.key, node.value!, node.cost)
    }

    /// Every entry, most recently used first.
    var entries: [(key: Key, value: Value, cost: Int)] {
        var out: [(key: Key, value: Value, cost: Int)] = []
        out.reserveCapacity(count)
        var index = head
        while index >= 0 {
            let node = nodes[Int(index)]
            out.append((node.key, node.value!, node.cost))
            index = node.next
        }
        return out
    }

    /// Every key (in no particular order).
    var keys: Dictionary<Key, Int32>.Keys { slots.keys }

    /// Empties the list, releasing its storage.
    @inlinable
    mutating func removeAll() {
        nodes = []
        slots = [:]
        freeSlots = []
        head = -1
        tail = -1
        totalCost = 0
    }

    @inlinable
    mutating func unlink(_ index: Int32) -> Value? {
        let node = nodes[Int(index)]
        if node.prev >= 0 { nodes[Int(node.prev)].next = node.next } else { head = node.next }
        if node.next >= 0 { nodes[Int(node.next)].prev = node.prev } else { tail = node.prev }
        totalCost -= node.cost
        let value = node.value
        nodes[Int(index)].value = nil
        nodes[Int(index)].prev = -1
        nodes[Int(index)].next = -1
        freeSlots.append(index)
        return value
    }

    @inlinable
    mutating func moveToFront(_ index: Int32) {
        guard head != index else { return }
        let prev = nodes[Int(index)].prev
        let next = nodes[Int(index)].next
        // Unlink (index is not head, so prev >= 0).
        nodes[Int(prev)].next = next
        if next >= 0 { nodes[Int(next)].prev = prev } else { tail = prev }
        // Link at head.
        nodes[Int(index)].prev = -1
        nodes[Int(index)].next = head
        nodes[Int(head)].prev = index
        head = index
    }
}
