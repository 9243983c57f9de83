# written by build/report from results/h200/20261129T230002Z.csv
run = "results/h200/20261129T230002Z.csv"
gpu = "h200"
mode = "cold"
npanels = 4
array panel_file[4] = ["plots/h200/data/panel_D64_full.dat", "plots/h200/data/panel_D64_causal.dat", "plots/h200/data/panel_D128_full.dat", "plots/h200/data/panel_D128_causal.dat"]
array panel_title[4] = ["head\\_dim 64, non-causal", "head\\_dim 64, causal", "head\\_dim 128, non-causal", "head\\_dim 128, causal"]
nvariants = 2
have_cudnn = 0
have_ratio = 1
peak_tflops = 794.9
ratio_file = "plots/h200/data/ratio.dat"
baseline = "results/h200/20261129T224013Z.csv"
