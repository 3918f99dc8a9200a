"""What the reports say about the chapter: its name, title, source, order, and the state of its text."""

NAME = "moe-chapter"
TITLE = "A textbook chapter on MoE mathematics (1.5: derivations and theoretical proofs)"
SOURCE = ("Chapter 1.5, 'MoE模型的数学推导与理论证明' (the mathematics of mixture-of-experts models: top-K routing, "
          "the load-balancing loss, gradients, three theorems, numerical stability)")
# The id groups in the chapter's order: the gate's definition, top-K routing and the unified form, the layer
# recursion and the batch form (the forward pass), the auxiliary loss and the gate's gradient, the experts'
# gradient (the backward pass), the three theorems, numerical stability.  Within a group the tool orders ids
# naturally.
ORDER = ("gate", "topk", "forward", "batch", "aux", "expert", "thm1", "thm2", "thm3", "softmax", "clipping")
SOURCE_NOTE = ("The chapter's display formulas are missing from its text: only the prose, the inline definitions "
               "and the theorems' statements survive. Every formula a check needs and the text lacks is a reading "
               "with its source (the standard form of the literature the chapter paraphrases), named in the entry; "
               "where the verdict depends on the reading, each reading is checked.")
SOURCE_CAVEAT = ("Where the slip rests on a reconstructed formula (its entry names the reading), it may be a slip of "
                 "the reconstruction.")
CONFIGURATION = ""
