"""tiercc: collective communication for two-tier clusters.

`import tiercc.torch` registers tiercc as the torch.distributed backend "tiercc".
"""
