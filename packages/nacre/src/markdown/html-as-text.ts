/** The few mdast fields this plugin reads (a structural type, so the entry needs no @types/mdast). */
interface MdNode {
  type: string;
  value?: string;
  children?: MdNode[];
}

/** Node types whose children are blocks, where a raw HTML block becomes a paragraph of text. */
const flowParents = new Set(["root", "blockquote", "listItem", "footnoteDefinition"]);

function convert(node: MdNode): void {
  if (!node.children) return;
  const flow = flowParents.has(node.type);
  node.children = node.children.map((child) => {
    if (child.type === "html") {
      const text: MdNode = { type: "text", value: child.value ?? "" };
      return flow ? { type: "paragraph", children: [text] } : text;
    }
    convert(child);
    return child;
  });
}

/**
 * A remark plugin: raw HTML in model text (`<script>`, `<img onerror>`, `<b>`) is shown as the text it is,
 * never parsed into elements and never silently dropped.
 */
export function remarkHtmlAsText() {
  return (tree: MdNode) => convert(tree);
}
