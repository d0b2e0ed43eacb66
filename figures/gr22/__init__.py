"""gr22 (Gupta & Ramdas 2022) tables and figures on the CIFAR logits."""
