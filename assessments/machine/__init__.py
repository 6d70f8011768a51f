"""Model-assisted assessment (issue 18): machine labels as their own source, never mixed into human qrels.

- examples: the human labels an annotator learns from (a campaign's judgements, or a qrel set over a pool),
  with a snapshot id;
- metrics: precision, recall, F1, ROC AUC, Cohen's κ (pure numpy);
- annotator: train a text-pair classifier with k-fold cross-validation, and label pools with it;
- llm: the OpenAI-compatible LLM judge and the query filter (seed 000 step 2);
- jobs: progress, rate and time left of the background work;
- compare: machine against human (κ, confusion, per topic), system rankings by human, machine and filled qrels,
  the anchoring effect, an audit sample of disagreements.

Whether a judging page shows a machine label is annotation.services.prelabels; the dashboard's section is
annotation.reports.machine.
"""
