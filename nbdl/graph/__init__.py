"""The graph IR (Node, Entry), shape/dtype inference, and the reverse pass that builds gradient graphs."""
