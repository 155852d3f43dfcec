"""What the Python walk (crawler.page.walk) asks of selectolax's tree, beyond a node's own
fields: a node's children, the document's body, whether a node is inside given subtrees, which
of some nodes are outermost in the body, their document order, and a node's text as the walk reads
it. Pure: a tree in, values out; nothing here changes the tree.

Nodes are compared by `mem_id` (the address of lexbor's node): selectolax makes a new Python
object each time it hands a node out.
"""

from __future__ import annotations

from selectolax.lexbor import LexborHTMLParser, LexborNode

__all__ = ["body_of", "children", "in_document_order", "inside", "outermost_in_body", "text_of"]


def children(node: LexborNode) -> list[LexborNode]:
    found = []
    child = node.child
    while child is not None:
        found.append(child)
        child = child.next
    return found


def _is_child(node: LexborNode, parent: LexborNode) -> bool:
    above = node.parent
    return above is not None and above.mem_id == parent.mem_id


def body_of(tree: LexborHTMLParser, root: LexborNode | None) -> LexborNode | None:
    body = tree.body
    # A <frameset> takes the place of a body the parser made: lexbor still names that one.
    if body is not None and (root is None or not _is_child(body, root)):
        return None
    return body


def outermost_in_body(
    nodes: list[LexborNode], body: LexborNode, gone: set[int]
) -> list[LexborNode]:
    """Those of `nodes` that are in `body` (or are it), in no subtree whose root is in `gone`
    (or is it), and inside none of the others, in the order given."""
    body_id = body.mem_id
    others = {node.mem_id for node in nodes}
    kept = []
    for node in nodes:
        at = node.mem_id
        in_body = at == body_id
        above: LexborNode | None = node
        while above is not None and (at := above.mem_id) not in gone:
            if above is not node and at in others:
                break
            in_body = in_body or at == body_id
            above = above.parent
        if above is None and in_body:
            kept.append(node)
    return kept


def in_document_order(nodes: list[LexborNode], document: LexborNode) -> list[LexborNode]:
    wanted = {node.mem_id for node in nodes}
    position: dict[int, int] = {}
    for at, node in enumerate(document.traverse(include_text=True)):
        if node.mem_id in wanted:
            position[node.mem_id] = at
            if len(position) == len(wanted):
                break
    return sorted(nodes, key=lambda node: position[node.mem_id])


def inside(node: LexborNode, roots: set[int]) -> bool:
    """`node` is one of `roots` or in one of their subtrees."""
    above: LexborNode | None = node
    while above is not None:
        if above.mem_id in roots:
            return True
        above = above.parent
    return False


def text_of(node: LexborNode) -> str:
    return node.text(separator=" ", strip=True, skip_empty=True)
